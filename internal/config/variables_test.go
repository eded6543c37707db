package config_test

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/testutil"
)

// evokore.cue's variables are the truth only if every EVOKORE_* or
// VOICE_SIDECAR_* name the code spells is declared there, each declared
// one is spelt by the package its declaration names, and every OTEL_*
// name the code spells is on the OpenTelemetry list.
func TestCodeReadsOnlyDeclaredVariables(t *testing.T) {
	root := testutil.Root(t)
	name := regexp.MustCompile(`"((?:EVOKORE|VOICE_SIDECAR|OTEL)_[A-Z0-9_]*[A-Z0-9])"`)
	spelt := map[string]map[string]bool{} // name -> package directories
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		// The table and the OpenTelemetry list spell every name: they
		// are what is checked, not evidence.
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.HasSuffix(path, "config/variables.go") || strings.HasSuffix(path, "config/variables_gen.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, m := range name.FindAllStringSubmatch(string(src), -1) {
			if spelt[m[1]] == nil {
				spelt[m[1]] = map[string]bool{}
			}
			spelt[m[1]][filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(spelt) < 30 {
		t.Fatalf("found only %d variables in the code: the scan is broken", len(spelt))
	}
	for v, pkgs := range spelt {
		if !config.IsKnownVariable(v) {
			t.Errorf("%s spells %s, which evokore.cue does not declare (add it under variables)", slices.Sorted(maps.Keys(pkgs)), v)
		}
	}
	for _, v := range config.KnownVariables() {
		if _, ok := spelt[v]; !ok {
			t.Errorf("%s is declared but no code spells it", v)
		}
	}
	for _, v := range config.Variables() {
		if pkgs := spelt[v.Name]; pkgs != nil && !pkgs[v.Package] {
			t.Errorf("evokore.cue says %s reads %s, but only %s spell it", v.Package, v.Name, slices.Sorted(maps.Keys(pkgs)))
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
