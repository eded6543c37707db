package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// CIMode reports whether missing test dependencies fail instead of skip:
// CI=true (as CI services set it) or EVOKORE_REQUIRE_SERVICES=1. A skip
// passes its package, so in CI it would let a claim go green untested.
func CIMode() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci || os.Getenv("EVOKORE_REQUIRE_SERVICES") == "1"
}

// Unavailable ends a test that cannot run here for the reason given:
// skipped, or failed in CI mode or when the variable alsoRequired names
// (the older EVOKORE_REQUIRE_NPM and EVOKORE_REQUIRE_PYTHON, which `make
// test` sets) is "1".
func Unavailable(t testing.TB, alsoRequired, reason string) {
	t.Helper()
	switch {
	case CIMode():
		t.Fatalf("%s (CI mode requires it)", reason)
	case alsoRequired != "" && os.Getenv(alsoRequired) == "1":
		t.Fatalf("%s (%s=1 requires it)", reason, alsoRequired)
	}
	t.Skip(reason)
}

// debianPackages names the package that provides a program the tests
// start, for the message that says what to install (.ci/deps installs
// the same ones).
var debianPackages = map[string]string{
	"redis-server": "redis-server",
	"nginx":        "nginx-light",
	"chromium":     "chromium",
	"git":          "git",
	"node":         "nodejs",
}

// Require returns the path of the first of names installed (see Find).
// When none is, the test is skipped saying what to install, or failed in
// CI mode (see Unavailable).
func Require(t testing.TB, names ...string) string {
	t.Helper()
	if p, ok := Find(names...); ok {
		return p
	}
	reason := fmt.Sprintf("%s is not installed", names[0])
	if pkg, ok := debianPackages[names[0]]; ok {
		reason += fmt.Sprintf(" (apt-get install %s; .ci/deps does it as root)", pkg)
	}
	Unavailable(t, "", reason)
	return ""
}

// Find returns the path of the first of names found on PATH, else in
// /usr/sbin or /sbin (where Debian puts nginx, outside a user's PATH).
func Find(names ...string) (string, bool) {
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	for _, name := range names {
		for _, dir := range []string{"/usr/sbin", "/sbin"} {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p, true
			}
		}
	}
	return "", false
}
