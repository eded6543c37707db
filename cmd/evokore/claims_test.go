package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
	"github.com/evokore/evokore/internal/vet"
)

// SIGINT (Ctrl-C in a terminal) stops every child and exits with status
// 0, without waiting for stdin to close.
func TestSIGINTStopsChildrenAndExitsZero(t *testing.T) {
	r := startRouter(t)
	pids := r.childPids(t)
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// The router itself goes (a zombie until reaped counts as gone) while
	// its stdin is still open, and takes its children with it.
	routertest.WaitGone(t, 10*time.Second, append(pids, r.cmd.Process.Pid)...)
	_ = r.cs.Close()
	if r.cmd.ProcessState == nil {
		t.Fatalf("the router was not reaped\n%s", r.stderr.String())
	}
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d after SIGINT\n%s", code, r.stderr.String())
	}
}

// `evokore version` prints the version: "dev" or the module's version by
// default, the -X main.version value of a release build.
func TestVersionCommand(t *testing.T) {
	out, code := evokoreIn(t, t.TempDir(), "version")
	if code != 0 || !regexp.MustCompile(`^evokore (dev|v\S+)\n$`).MatchString(out) {
		t.Errorf("version: exit %d %q", code, out)
	}
	bin := filepath.Join(t.TempDir(), "evokore-release")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7", "-o", bin, "./cmd/evokore")
	build.Dir = testutil.Root(t)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	got, err := exec.Command(bin, "version").Output()
	if err != nil || string(got) != "evokore v9.8.7\n" {
		t.Errorf("release build version: %q %v", got, err)
	}
}

// A non-security variable in ./.env counts, the real environment wins
// over it, and ${VAR} placeholders see both.
func TestDotEnvUnderTheRealEnvironment(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFile(t, dir, ".env", "EVOKORE_TOOL_DISCOVERY_MODE=legacy\nEVOKORE_TEST_GREETING=from-dotenv\nEVOKORE_TEST_WINNER=from-dotenv\n")
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fx": map[string]any{"command": testutil.FixtureServer(t), "env": map[string]any{
			"GREETING": "${EVOKORE_TEST_GREETING}", "WINNER": "${EVOKORE_TEST_WINNER}"}},
	}})
	cmd := exec.Command(testutil.Evokore(t), "serve")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"), "EVOKORE_TEST_WINNER=from-environment"}
	stderr := &routertest.Buffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "dotenv-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	// legacy mode from .env: the child's tools are all listed.
	routertest.WaitFor(t, "fx_env to be listed", func() bool { return slices.Contains(routertest.ToolNames(t, cs), "fx_env") })
	for name, want := range map[string]string{"GREETING": "GREETING=from-dotenv", "WINNER": "WINNER=from-environment"} {
		if got := routertest.Text(routertest.Call(t, cs, "fx_env", map[string]any{"name": name})); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

// vetJSON runs `evokore vet --format json args...` in dir.
func vetJSON(t *testing.T, dir string, args ...string) ([]struct{ Severity, Code, Message string }, int) {
	t.Helper()
	out, code := evokoreIn(t, dir, append([]string{"vet", "--format", "json"}, args...)...)
	var ds []struct{ Severity, Code, Message string }
	if err := json.Unmarshal([]byte(out), &ds); err != nil {
		t.Fatalf("vet output: %v\n%s", err, out)
	}
	return ds, code
}

// `vet --live` boots the children and reports what only a live boot can
// tell: a child that fails to boot (error), a prefixed-name collision and
// a rule naming a tool no booted server serves (warnings).
func TestVetLiveDiagnostics(t *testing.T) {
	dir := t.TempDir()
	fx := testutil.FixtureServer(t)
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fx":     map[string]any{"command": fx, "args": []string{"-alias", "x_echo"}},
		"fx_x":   map[string]any{"command": fx},
		"broken": map[string]any{"command": filepath.Join(dir, "no-such-program")},
	}})
	testutil.WriteFile(t, dir, "permissions.yml", "rules:\n  fx_echo: allow\n  fx_no_such_tool: deny\n")
	// Without --live none of it can be known.
	ds, code := vetJSON(t, dir)
	for _, d := range ds {
		if d.Code == vet.CodeBootFailed || d.Code == vet.CodeCollision || d.Code == vet.CodeUnknownTool {
			t.Errorf("offline vet reported a live finding: %+v", d)
		}
	}
	if code != 0 {
		t.Errorf("offline vet exit %d: %+v", code, ds)
	}
	ds, code = vetJSON(t, dir, "--live")
	if code != 1 {
		t.Errorf("vet --live with a child that cannot boot: exit %d", code)
	}
	want := map[string]*regexp.Regexp{
		vet.CodeBootFailed:  regexp.MustCompile(`^server 'broken' failed to boot: `),
		vet.CodeCollision:   regexp.MustCompile(`^'fx_x_echo' is served by .*fx.*fx_x`),
		vet.CodeUnknownTool: regexp.MustCompile(`^rules names 'fx_no_such_tool', but server 'fx' serves no such tool$`),
	}
	severity := map[string]string{vet.CodeBootFailed: "error", vet.CodeCollision: "warning", vet.CodeUnknownTool: "warning"}
	for code, re := range want {
		found := false
		for _, d := range ds {
			if d.Code == code && re.MatchString(d.Message) && d.Severity == severity[code] {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s %s matching %s in %+v", severity[code], code, re, ds)
		}
	}
	for _, d := range ds {
		if d.Code == vet.CodeUnknownTool && regexp.MustCompile(`'fx_echo'`).MatchString(d.Message) {
			t.Errorf("a served tool reported as unknown: %+v", d)
		}
	}
	// In text, a line per child as its boot ends (internal/vet
	// TestLiveTellsEachBootAsItEnds: as it ends, not at the end).
	text, _ := evokoreIn(t, dir, "vet", "--live")
	for _, re := range []string{`(?m)^boot fx: connected, \d+ tool\(s\)$`, `(?m)^boot broken: failed: `} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("no line matching %s:\n%s", re, text)
		}
	}
}

// `vet --matrix` on the command line: rows for natives and, with --live,
// proxied tools, filtered by --role, in the shipped roles' levels.
func TestVetMatrixCommandLine(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fx": map[string]any{"command": testutil.FixtureServer(t)},
	}})
	out, code := evokoreIn(t, dir, "vet", "--matrix", "--live", "--role", "readonly", "--profile", "default", "--format", "json")
	var rows []vet.Row
	if err := json.Unmarshal([]byte(out), &rows); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	level := map[string]vet.Row{}
	for _, r := range rows {
		if r.Role != "readonly" || r.Profile != "default" {
			t.Errorf("--role/--profile not applied: %+v", r)
		}
		level[r.Tool] = r
	}
	for tool, want := range map[string]string{"fx_echo": "deny", "proxy_server_status": "allow", "fleet_spawn": "deny"} {
		if r, ok := level[tool]; !ok || r.Level != want {
			t.Errorf("%s: %+v (present %v), want %s", tool, r, ok, want)
		}
	}
	if r := level["fx_echo"]; r.Source != "proxy" || r.Server != "fx" || r.Visible {
		t.Errorf("fx_echo row: %+v (hidden in the default profile, served by fx)", r)
	}
	if !level["describe_tool"].Visible {
		t.Errorf("describe_tool is always listed: %+v", level["describe_tool"])
	}
	// The table form has a header and a row per tool.
	table, code := evokoreIn(t, dir, "vet", "--matrix", "--role", "none", "--profile", "default")
	if code != 0 || !regexp.MustCompile(`(?m)^ROLE\s+PROFILE\s+TOOL\s+SOURCE\s+LISTED\s+LEVEL$`).MatchString(table) ||
		!regexp.MustCompile(`(?m)^none\s+default\s+execute_skill\s+native\s+visible\s+approval$`).MatchString(table) {
		t.Errorf("table: exit %d\n%s", code, table)
	}
}

// Exit status 2 for bad usage; every command takes --config,
// --permissions, --skills and --help.
func TestUsageExitCodesAndCommonFlags(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"vet", "--no-such-flag"}, {"no-such-command"}, {"profile", "--tokenizer", "nope"}} {
		if out, code := evokoreIn(t, dir, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, out)
		}
	}
	for _, cmd := range []string{"serve", "vet", "profile", "approvals", "pins", "voice", "version"} {
		out, code := evokoreIn(t, dir, cmd, "--help")
		if code != 0 {
			t.Errorf("%s --help: exit %d", cmd, code)
		}
		for _, flag := range []string{"--config", "--permissions", "--skills", "--help"} {
			if !regexp.MustCompile(`(?m)^\s+(-\w, )?` + flag + `\b`).MatchString(out) {
				t.Errorf("%s --help does not offer %s:\n%s", cmd, flag, out)
			}
		}
	}
}

// testName is a name docs/claims.md gives a test: a test, benchmark,
// fuzz target or example, with an optional subtest.
var testName = regexp.MustCompile(`^(Test|Benchmark|Fuzz|Example)\w*(/\S+)?$`)

// packagePath is how docs/claims.md names a package of this module.
var packagePath = regexp.MustCompile(`^(cmd|internal|gen)(/[a-z0-9_]+)*$`)

// TestClaimsNameOnlyTestsThatExist reads every row of docs/claims.md: in
// its last column a package path (`internal/vet`, `cmd/evokore/e2e`,
// `gen`) names the package of the test names after it, and each named
// test must be a function of that package's test files (a subtest's name
// must be written in them too). A row naming a test that was renamed or
// removed, or a test with no package before it, fails here.
func TestClaimsNameOnlyTestsThatExist(t *testing.T) {
	root := testutil.Root(t)
	f, err := os.Open(filepath.Join(root, "docs", "claims.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sources := map[string]string{} // package dir → its test files' text
	testsOf := func(pkg string) (string, bool) {
		if src, ok := sources[pkg]; ok {
			return src, src != ""
		}
		files, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(pkg), "*_test.go"))
		var b strings.Builder
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(src)
		}
		sources[pkg] = b.String()
		return sources[pkg], len(files) > 0
	}
	named, line := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line++
		row := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(row, "|") || strings.HasPrefix(row, "|---") || strings.HasPrefix(row, "| Promise") {
			continue
		}
		cols := strings.Split(strings.Trim(row, "|"), " | ")
		pkg := ""
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cols[len(cols)-1], -1) {
			tok := m[1]
			if _, isPkg := testsOf(tok); isPkg {
				pkg = tok
				continue
			}
			if packagePath.MatchString(tok) {
				t.Errorf("docs/claims.md:%d: %s is not a package with tests", line, tok)
				continue
			}
			if !testName.MatchString(tok) {
				continue // a command, a file, a field
			}
			named++
			if pkg == "" {
				t.Errorf("docs/claims.md:%d: %s has no package before it", line, tok)
				continue
			}
			src, _ := testsOf(pkg)
			fn, sub, _ := strings.Cut(tok, "/")
			if !regexp.MustCompile(`(?m)^func ` + fn + `\(`).MatchString(src) {
				t.Errorf("docs/claims.md:%d: %s names %s, which is not a test there", line, pkg, fn)
				continue
			}
			if sub != "" && !strings.Contains(src, sub) && !strings.Contains(src, strings.ReplaceAll(sub, "_", " ")) {
				t.Errorf("docs/claims.md:%d: %s names the subtest %s, which %s does not have", line, pkg, tok, fn)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if named < 300 {
		t.Errorf("only %d tests named: the table was not read", named)
	}
}
