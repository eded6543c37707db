package vet_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/vet"
)

// brokenDir holds one directory per broken fixture: the files to vet, a
// want.txt and, optionally, an empty file named "strict" to vet with Strict.
const brokenDir = "../../testdata/vet/broken"

// originalDir holds files in the original product's format.
const originalDir = "../../testdata/original"

// The placeholders testdata/original refers to in its enabled servers.
var originalSecrets = []string{
	"GITHUB_PERSONAL_ACCESS_TOKEN",
	"ELEVENLABS_API_KEY",
	"SUPABASE_ACCESS_TOKEN",
	"STITCH_API_KEY",
}

// fixedEnv is the environment every vet.Run here sees: nothing leaks in
// from the shell running the tests.
func fixedEnv(vars map[string]string) config.Env {
	return config.NewEnv(vars)
}

// want is one expected diagnostic: where it is and part of its message.
type want struct {
	base      string
	line, col int
	substr    string
	raw       string
}

func readWant(t *testing.T, path string) []want {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var out []want
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, ":", 4)
		if len(parts) != 4 {
			t.Fatalf("%s:%d: want <basename>:<line>:<col>: <substring>, got %q", path, n, line)
		}
		l, err1 := strconv.Atoi(parts[1])
		c, err2 := strconv.Atoi(parts[2])
		sub := strings.TrimSpace(parts[3])
		if err1 != nil || err2 != nil || sub == "" || parts[0] == "" {
			t.Fatalf("%s:%d: malformed expectation %q", path, n, line)
		}
		out = append(out, want{base: parts[0], line: l, col: c, substr: sub, raw: line})
	}
	if len(out) == 0 {
		t.Fatalf("%s: no expectations", path)
	}
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func dump(ds config.Diagnostics) string {
	if len(ds) == 0 {
		return "  (no diagnostics)"
	}
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("  " + d.String() + "\n")
	}
	return b.String()
}

func brokenFixtures(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(brokenDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	if len(out) < 14 {
		t.Fatalf("found %d broken fixtures under %s, want at least 14", len(out), brokenDir)
	}
	return out
}

func TestBrokenFixtures(t *testing.T) {
	for _, dir := range brokenFixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			cfgPath := filepath.Join(dir, "mcp.config.json")
			permPath := filepath.Join(dir, "permissions.yml")
			if !exists(cfgPath) && !exists(permPath) {
				t.Fatalf("%s holds neither mcp.config.json nor permissions.yml", dir)
			}
			wants := readWant(t, filepath.Join(dir, "want.txt"))
			ds := vet.Run(vet.Options{
				ConfigPath:      cfgPath,
				PermissionsPath: permPath,
				Env:             fixedEnv(nil),
				Strict:          exists(filepath.Join(dir, "strict")),
			})
			if !ds.HasErrors() {
				t.Errorf("vet found no errors (exit status would be 0); diagnostics:\n%s", dump(ds))
			}
			for _, w := range wants {
				found := false
				for _, d := range ds {
					if filepath.Base(d.File) == w.base && d.Line == w.line && d.Col == w.col &&
						strings.Contains(d.Message, w.substr) {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("no diagnostic matches %q; got:\n%s", w.raw, dump(ds))
				}
			}
		})
	}
}

// TestUnconfiguredServerIsAWarning: naming a proxied tool of a server that
// is not configured may be deliberate (the server is added later), so it
// must not fail vet on its own.
func TestUnconfiguredServerIsAWarning(t *testing.T) {
	dir := filepath.Join(brokenDir, "09-profile-unconfigured-server")
	ds := vet.Run(vet.Options{
		ConfigPath:      filepath.Join(dir, "mcp.config.json"),
		PermissionsPath: filepath.Join(dir, "permissions.yml"),
		Env:             fixedEnv(nil),
	})
	var got []config.Diagnostic
	for _, d := range ds {
		if d.Code == vet.CodeUnknownServer {
			got = append(got, d)
		}
	}
	if len(got) != 1 {
		t.Fatalf("want one %s diagnostic, got:\n%s", vet.CodeUnknownServer, dump(ds))
	}
	if got[0].Severity != config.SeverityWarning {
		t.Errorf("%s has severity %s, want %s", got[0], got[0].Severity, config.SeverityWarning)
	}

	strict := vet.Run(vet.Options{
		ConfigPath:      filepath.Join(dir, "mcp.config.json"),
		PermissionsPath: filepath.Join(dir, "permissions.yml"),
		Env:             fixedEnv(nil),
		Strict:          true,
	})
	if len(strict) != len(ds) {
		t.Fatalf("Strict changed the diagnostics: %d, want %d:\n%s", len(strict), len(ds), dump(strict))
	}
	for _, d := range strict {
		if d.Severity != config.SeverityError {
			t.Errorf("with Strict, %s is still a %s", d, d.Severity)
		}
	}
}

func TestShippedDefaultsAreClean(t *testing.T) {
	dir := t.TempDir()
	for _, strict := range []bool{false, true} {
		ds := vet.Run(vet.Options{
			ConfigPath:      filepath.Join(dir, "mcp.config.json"),
			PermissionsPath: filepath.Join(dir, "permissions.yml"),
			Env:             fixedEnv(nil),
			Strict:          strict,
		})
		if len(ds) != 0 {
			t.Errorf("strict=%v: shipped defaults give diagnostics:\n%s", strict, dump(ds))
		}
	}
}

func TestOriginalFormat(t *testing.T) {
	opts := vet.Options{
		ConfigPath:      filepath.Join(originalDir, "mcp.config.json"),
		PermissionsPath: filepath.Join(originalDir, "permissions.yml"),
		Env:             fixedEnv(nil),
	}
	for _, f := range []string{opts.ConfigPath, opts.PermissionsPath} {
		if !exists(f) {
			t.Fatalf("%s is missing", f)
		}
	}

	ds := vet.Run(opts)
	if ds.HasErrors() {
		t.Fatalf("original files have errors:\n%s", dump(ds))
	}

	// The files hold what they are meant to exercise.
	cfg, err := config.LoadMCPConfig(opts.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	disabled := 0
	for _, s := range cfg.Servers {
		if s.Disabled {
			disabled++
		}
	}
	gh, _ := cfg.Server("github")
	if len(cfg.Servers) != 8 || disabled != 3 || gh == nil || gh.RateLimit.ServerRate().Burst != 60 ||
		gh.RateLimit.ToolRates()["create_issue"].Burst != 10 || len(cfg.Discovery.Profiles) != 1 {
		t.Errorf("mcp.config.json: %d servers, %d disabled, github %+v, %d profiles",
			len(cfg.Servers), disabled, gh, len(cfg.Discovery.Profiles))
	}
	perms, err := config.LoadPermissions(opts.PermissionsPath, config.Permissions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(perms.Roles) != 3 || len(perms.Rules) != 26 || perms.ActiveRole != "" {
		t.Errorf("permissions.yml: %d roles, %d rules, active role %q", len(perms.Roles), len(perms.Rules), perms.ActiveRole)
	}
	// Only the enabled servers' secrets are reported; the disabled
	// reverse-engineering servers' placeholders are never resolved.
	if len(originalSecrets) == 0 || len(ds) != len(originalSecrets) {
		t.Fatalf("want one unset-placeholder warning per secret (%d), got:\n%s", len(originalSecrets), dump(ds))
	}
	unset := map[string]bool{}
	for _, d := range ds {
		if d.Code != vet.CodeUnsetPlaceholder {
			t.Errorf("unexpected diagnostic %s", d)
			continue
		}
		for _, name := range originalSecrets {
			if strings.Contains(d.Message, "${"+name+"}") {
				unset[name] = true
			}
		}
		if strings.Contains(d.Message, "EVOKORE_RE_") {
			t.Errorf("placeholder of a disabled server reported: %s", d)
		}
	}
	for _, name := range originalSecrets {
		if !unset[name] {
			t.Errorf("no unset-placeholder warning for ${%s}; got:\n%s", name, dump(ds))
		}
	}

	opts.Strict = true
	strict := vet.Run(opts)
	if !strict.HasErrors() {
		t.Fatalf("with Strict the unset placeholders must be errors; got:\n%s", dump(strict))
	}
	if len(strict) != len(ds) {
		t.Errorf("Strict changed the number of diagnostics: %d, want %d", len(strict), len(ds))
	}
	for _, d := range strict {
		if d.Severity != config.SeverityError {
			t.Errorf("with Strict, %s is a %s", d, d.Severity)
		}
	}

	// With every secret set (an empty value counts as set) nothing is left.
	vars := map[string]string{}
	for i, name := range originalSecrets {
		vars[name] = strings.Repeat("x", i) // the first one is empty
	}
	opts.Env = fixedEnv(vars)
	if clean := vet.Run(opts); len(clean) != 0 {
		t.Errorf("with every secret set, Strict vet still reports:\n%s", dump(clean))
	}
}

func TestUnknownEvokoreRole(t *testing.T) {
	ds := vet.Run(vet.Options{
		ConfigPath:      filepath.Join(originalDir, "mcp.config.json"),
		PermissionsPath: filepath.Join(originalDir, "permissions.yml"),
		Env:             fixedEnv(map[string]string{"EVOKORE_ROLE": "develope"}),
	})
	for _, d := range ds {
		if d.Code == vet.CodeUnknownRole && d.Severity == config.SeverityError &&
			strings.Contains(d.Message, "EVOKORE_ROLE 'develope'") && strings.Contains(d.Message, "'developer'") {
			return
		}
	}
	t.Errorf("no unknown-role error for EVOKORE_ROLE=develope; got:\n%s", dump(ds))
}

// moduleRoot walks up from the package directory to go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if exists(filepath.Join(dir, "go.mod")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

func TestVetCommandJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the evokore binary")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "evokore")
	build := exec.Command("go", "build", "-o", bin, "./cmd/evokore")
	build.Dir = moduleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/evokore: %v\n%s", err, out)
	}
	// The command reads .env from its working directory: give it an empty one.
	work := filepath.Join(tmp, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}

	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	run := func(t *testing.T, dir string, extraEnv []string, args ...string) (int, []byte) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"vet",
			"--config", abs(filepath.Join(dir, "mcp.config.json")),
			"--permissions", abs(filepath.Join(dir, "permissions.yml")),
			"--format", "json"}, args...)...)
		cmd.Dir = work
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + tmp}, extraEnv...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			t.Fatalf("run evokore vet: %v", err)
		}
		t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.Bytes(), stderr.Bytes())
		return code, stdout.Bytes()
	}

	type diag struct {
		File     string `json:"file"`
		Line     int    `json:"line"`
		Col      int    `json:"col"`
		Severity string `json:"severity"`
		Code     string `json:"code"`
		Message  string `json:"message"`
	}
	// parse checks the shape: a JSON list of objects holding exactly the
	// six keys, each of the right JSON type.
	parse := func(t *testing.T, out []byte) []diag {
		t.Helper()
		var raw []map[string]json.RawMessage
		if err := json.Unmarshal(out, &raw); err != nil {
			t.Fatalf("stdout is not a JSON list of objects: %v", err)
		}
		if raw == nil {
			t.Fatalf("stdout is JSON null, want a list")
		}
		var ds []diag
		for i, obj := range raw {
			if len(obj) != 6 {
				t.Errorf("element %d has %d keys, want 6: %v", i, len(obj), obj)
			}
			for _, k := range []string{"file", "severity", "code", "message"} {
				var s string
				if err := json.Unmarshal(obj[k], &s); err != nil {
					t.Errorf("element %d: %q is %s, want a string", i, k, obj[k])
				}
			}
			for _, k := range []string{"line", "col"} {
				var n int
				if err := json.Unmarshal(obj[k], &n); err != nil {
					t.Errorf("element %d: %q is %s, want an integer", i, k, obj[k])
				}
			}
			var d diag
			b, _ := json.Marshal(obj)
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			if d.Severity != "error" && d.Severity != "warning" {
				t.Errorf("element %d: severity %q", i, d.Severity)
			}
			ds = append(ds, d)
		}
		return ds
	}

	t.Run("broken", func(t *testing.T) {
		code, out := run(t, filepath.Join(brokenDir, "05-bad-transport"), nil)
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		ds := parse(t, out)
		found := false
		for _, d := range ds {
			if filepath.Base(d.File) == "mcp.config.json" && d.Line == 4 && d.Col == 20 &&
				d.Severity == "error" && d.Code == "schema" && strings.Contains(d.Message, `"websocket" is not allowed`) {
				found = true
			}
		}
		if !found {
			t.Errorf("no error for the bad transport at mcp.config.json:4:20 in %+v", ds)
		}
	})

	t.Run("original", func(t *testing.T) {
		code, out := run(t, originalDir, nil)
		if code != 0 {
			t.Errorf("exit %d, want 0", code)
		}
		ds := parse(t, out)
		if len(ds) != len(originalSecrets) {
			t.Fatalf("got %d diagnostics, want %d unset-placeholder warnings", len(ds), len(originalSecrets))
		}
		for _, d := range ds {
			if d.Severity != "warning" || d.Code != vet.CodeUnsetPlaceholder || d.Line == 0 || d.Col == 0 {
				t.Errorf("unexpected diagnostic %+v", d)
			}
		}
	})

	t.Run("original-strict", func(t *testing.T) {
		code, out := run(t, originalDir, nil, "--strict")
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		ds := parse(t, out)
		if len(ds) != len(originalSecrets) {
			t.Fatalf("with --strict: %d diagnostics, want %d", len(ds), len(originalSecrets))
		}
		for _, d := range ds {
			if d.Severity != "error" {
				t.Errorf("with --strict, %+v is not an error", d)
			}
		}
	})

	t.Run("original-clean", func(t *testing.T) {
		var env []string
		for _, name := range originalSecrets {
			env = append(env, name+"=set-for-test")
		}
		code, out := run(t, originalDir, env, "--strict")
		if code != 0 {
			t.Errorf("exit %d, want 0", code)
		}
		if got := strings.TrimSpace(string(out)); got != "[]" {
			t.Errorf("stdout %q, want []", got)
		}
		parse(t, out)
	})
}

// subjectEnv on a shared server is a positioned warning (its values are
// a caller's instance's, and it has none); a name that is no variable
// name is a positioned error.
func TestSubjectEnvDiagnostics(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.config.json")
	text := "{\"servers\": {\n  \"gh\": {\"command\": \"gh-mcp\", \"env\": {\"T\": \"${GH_TOKEN}\"},\n    \"subjectEnv\": [\"GH_TOKEN\"]},\n  \"bad\": {\"command\": \"x\", \"scope\": \"subject\", \"subjectEnv\": [\"1-no\"]}\n}}\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ds := vet.Run(vet.Options{ConfigPath: cfg, Env: fixedEnv(map[string]string{"GH_TOKEN": "x"})})
	var warned, refused bool
	for _, d := range ds {
		if d.Code == vet.CodeSharedSubjectEnv && d.Severity == config.SeverityWarning && d.Line == 3 && d.Col == 6 {
			warned = true
		}
		if d.Severity == config.SeverityError && d.Line == 4 && strings.Contains(d.Message, "subjectEnv") {
			refused = true
		}
	}
	if !warned || !refused {
		t.Errorf("warned %v, refused %v; diagnostics:\n%s", warned, refused, dump(ds))
	}
}
