package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/testutil"
)

// JWT mode with no audience to check refuses to start, and says what to
// set; it does not serve tokens minted for any service.
func TestServeHTTPJWTWithoutAudienceRefusesToStart(t *testing.T) {
	dir := t.TempDir()
	// A router that starts serving never exits by itself: the context
	// ends it, and the test fails on its output.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Evokore(t), "serve", "--http", "127.0.0.1:0")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"),
		"EVOKORE_AUTH_REQUIRED=true", "EVOKORE_AUTH_MODE=jwt", "EVOKORE_OAUTH_JWKS_URI=http://127.0.0.1:1/jwks"}
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 || !strings.Contains(string(out), "EVOKORE_OAUTH_AUDIENCE") ||
		!strings.Contains(string(out), "EVOKORE_OAUTH_ALLOW_ANY_AUDIENCE=unsafe") {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
}
