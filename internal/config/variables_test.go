package config_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/testutil"
)

// The list of known variables is the truth only if every variable the
// code spells is on it, and nothing on it is spelt nowhere.
func TestKnownVariablesMatchTheCode(t *testing.T) {
	root := testutil.Root(t)
	name := regexp.MustCompile(`"((?:EVOKORE|VOICE_SIDECAR|OTEL)_[A-Z0-9_]*[A-Z0-9])"`)
	spelt := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, "variables.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range name.FindAllStringSubmatch(string(src), -1) {
			spelt[m[1]] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(spelt) < 30 {
		t.Fatalf("found only %d variables in the code: the scan is broken", len(spelt))
	}
	for v, path := range spelt {
		if !config.IsKnownVariable(v) {
			t.Errorf("%s reads %s, which is not in config's list of known variables", path, v)
		}
	}
	for _, v := range config.KnownVariables() {
		if _, ok := spelt[v]; !ok {
			t.Errorf("%s is listed as known but no code spells it", v)
		}
	}
}

func TestUnknownVariablesAreReported(t *testing.T) {
	env := config.NewEnv(map[string]string{
		"EVOKORE_ROLE":                "developer",
		"EVOKORE_STEERING_MODE":       "true",
		"EVOKORE_TOOL_LIST_PAGINATON": "on",
		"VOICE_SIDECAR_NOPE":          "1",
		"EVOKORE_AUDIT_EXPORT_FORMAT": "json",
		"SOMETHING_ELSE":              "x",
	})
	_, warnings := config.ReadSettings(env, config.Defaults{})
	all := strings.Join(warnings, "\n")
	for _, want := range []string{
		"EVOKORE_STEERING_MODE is an EVOKORE-MCP setting evokore does not support; it has no effect",
		"EVOKORE_AUDIT_EXPORT_FORMAT is an EVOKORE-MCP setting evokore does not support",
		"EVOKORE_TOOL_LIST_PAGINATON is not a setting evokore knows; it has no effect (did you mean EVOKORE_TOOL_LIST_PAGINATION?)",
		"VOICE_SIDECAR_NOPE is not a setting evokore knows",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "EVOKORE_ROLE") || strings.Contains(all, "SOMETHING_ELSE") {
		t.Errorf("a known or foreign variable was reported:\n%s", all)
	}
	if n := strings.Count(all, "EVOKORE_STEERING_MODE"); n != 1 {
		t.Errorf("reported %d times", n)
	}
}

// Every boolean setting takes the same spellings.
func TestBooleanSettingsShareOneParser(t *testing.T) {
	keys := []string{"EVOKORE_TOOL_LIST_PAGINATION", "EVOKORE_SECURITY_DEFAULT_DENY", "EVOKORE_TELEMETRY", "EVOKORE_SKILL_WATCHER", "EVOKORE_HTTP_ALLOW_PRIVATE"}
	read := func(s config.Settings) []bool {
		return []bool{s.Pagination, s.DefaultDeny, s.Telemetry, s.SkillWatcher, s.HTTPAllowPrivate}
	}
	for _, raw := range []string{"1", "true", "TRUE", "on", "On", "yes", " yes "} {
		vars := map[string]string{}
		for _, k := range keys {
			vars[k] = raw
		}
		s, warnings := config.ReadSettings(config.NewEnv(vars), config.Defaults{})
		if got := read(s); slices.Contains(got, false) || len(warnings) != 0 {
			t.Errorf("%q: %v, warnings %v", raw, got, warnings)
		}
	}
	for _, raw := range []string{"0", "false", "off", "no", ""} {
		vars := map[string]string{}
		for _, k := range keys {
			vars[k] = raw
		}
		s, warnings := config.ReadSettings(config.NewEnv(vars), config.Defaults{})
		if got := read(s); slices.Contains(got, true) || len(warnings) != 0 {
			t.Errorf("%q: %v, warnings %v", raw, got, warnings)
		}
	}
	s, warnings := config.ReadSettings(config.NewEnv(map[string]string{"EVOKORE_TELEMETRY": "enabled"}), config.Defaults{})
	if s.Telemetry || len(warnings) != 1 || !strings.Contains(warnings[0], "EVOKORE_TELEMETRY") {
		t.Errorf("an unreadable boolean must be off and reported: %v %v", s.Telemetry, warnings)
	}
}
