package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
)

// runEvokore runs the binary in dir with only env (plus PATH and HOME) and
// returns its exit code, stdout and stderr.
func runEvokore(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(testutil.Evokore(t), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home")}, env...)
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// A path a flag or variable names must exist; only the defaults may be
// absent. vet says which files it read.
func TestVetChosenPathsMustExist(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "nope", "mcp.config.json")
	for name, tc := range map[string]struct {
		env  []string
		args []string
		want string
	}{
		"--config":                 {nil, []string{"--config", gone}, "--config names " + gone + ", which does not exist"},
		"EVOKORE_MCP_CONFIG_PATH":  {[]string{"EVOKORE_MCP_CONFIG_PATH=" + gone}, nil, "EVOKORE_MCP_CONFIG_PATH names " + gone},
		"--permissions":            {nil, []string{"--permissions", gone + ".yml"}, "--permissions names " + gone + ".yml"},
		"EVOKORE_PERMISSIONS_PATH": {[]string{"EVOKORE_PERMISSIONS_PATH=" + gone + ".yml"}, nil, "EVOKORE_PERMISSIONS_PATH names " + gone + ".yml"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, _ := runEvokore(t, dir, tc.env, append([]string{"vet"}, tc.args...)...)
			if code != 1 || !strings.Contains(out, tc.want) || !strings.Contains(out, "[missing-file]") || strings.Contains(out, "(absent") ||
				(strings.HasPrefix(name, "--config") || strings.HasPrefix(name, "EVOKORE_MCP")) && !strings.Contains(out, gone+" does not exist ("+name+" names it)") {
				t.Errorf("vet: exit %d, want 1 and %q:\n%s", code, tc.want, out)
			}
			code, _, errOut := runEvokore(t, dir, tc.env, append([]string{"serve"}, tc.args...)...)
			if code != 1 || !strings.Contains(errOut, tc.want) {
				t.Errorf("serve: exit %d, want 1 and %q:\n%s", code, tc.want, errOut)
			}
		})
	}
	code, out, _ := runEvokore(t, dir, nil, "vet")
	if code != 0 {
		t.Errorf("absent default files: exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"read mcp.config.json: " + filepath.Join(dir, "mcp.config.json") + " does not exist, so no child servers",
		// With no ./permissions.yml, the user's, as serve reads.
		"read permissions.yml: " + filepath.Join(dir, "home", "permissions.yml") + " does not exist, so the shipped roles and rules apply",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("vet does not say %q:\n%s", want, out)
		}
	}
}

// EVOKORE_ROLE is checked against the shipped roles when there is no
// permissions.yml; an unknown --role is a usage error naming the roles.
func TestVetRoles(t *testing.T) {
	dir := t.TempDir()
	code, out, _ := runEvokore(t, dir, []string{"EVOKORE_ROLE=develper"}, "vet")
	if code != 1 || !strings.Contains(out, "$EVOKORE_ROLE: error: EVOKORE_ROLE 'develper' is not defined under roles among the shipped roles") ||
		!strings.Contains(out, "did you mean 'developer'?") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if code, out, _ := runEvokore(t, dir, []string{"EVOKORE_ROLE=developer"}, "vet"); code != 0 {
		t.Errorf("a shipped role: exit %d:\n%s", code, out)
	}
	code, _, errOut := runEvokore(t, dir, nil, "vet", "--matrix", "--role", "admn")
	if code != 2 || !strings.Contains(errOut, `--role "admn" is not a role`) || !strings.Contains(errOut, "the roles are: none, admin, developer, readonly") {
		t.Errorf("unknown --role: exit %d, want 2 and the roles:\n%s", code, errOut)
	}
	if code, _, errOut := runEvokore(t, dir, nil, "vet", "--matrix", "--role", "readonly"); code != 0 {
		t.Errorf("a shipped --role: exit %d:\n%s", code, errOut)
	}
}

// A server id too long for any of its tools' names is flagged without
// booting it; variables evokore does not know are warnings in vet and
// reported once by serve.
func TestVetStaticChecksAndUnknownVariables(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("s", 63)
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		long:                    map[string]any{"command": "x"},
		strings.Repeat("k", 62): map[string]any{"command": "x"},
	}})
	env := []string{"EVOKORE_STEERING_MODE=true", "EVOKORE_TOOL_LIST_PAGINATON=on"}
	code, out, _ := runEvokore(t, dir, env, "vet")
	if code != 1 || strings.Count(out, "[invalid-server-id]") != 1 || !strings.Contains(out, "server id '"+long+"' is 63 characters") {
		t.Errorf("exit %d, want one invalid-server-id error for the 63-character id:\n%s", code, out)
	}
	for _, want := range []string{
		"$EVOKORE_STEERING_MODE: warning: EVOKORE_STEERING_MODE is an EVOKORE-MCP setting evokore does not support; it has no effect [unknown-variable]",
		"$EVOKORE_TOOL_LIST_PAGINATON: warning: EVOKORE_TOOL_LIST_PAGINATON is not a setting evokore knows; it has no effect (did you mean EVOKORE_TOOL_LIST_PAGINATION?) [unknown-variable]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("vet lacks %q:\n%s", want, out)
		}
	}
	os.Remove(filepath.Join(dir, "mcp.config.json"))
	code, _, errOut := runEvokore(t, dir, env, "serve")
	if code != 0 || strings.Count(errOut, "EVOKORE_STEERING_MODE is an EVOKORE-MCP setting evokore does not support") != 1 {
		t.Errorf("serve: exit %d, want the unknown variable reported once:\n%s", code, errOut)
	}
}

// serve names each variable whose value it cannot use, with the value,
// once, at start, whichever package reads the variable.
func TestServeReportsBadSettingValues(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runEvokore(t, dir, []string{"EVOKORE_SESSION_TTL_MS=0", "EVOKORE_AUDIT_KEEP=lots",
		"EVOKORE_TOOL_SCHEMA_MODE=lazy", "EVOKORE_SECURITY_DEFAULT_DENY=sure", "EVOKORE_TELEMETRY=enabled"}, "serve")
	for _, want := range []string{
		`Ignoring EVOKORE_SESSION_TTL_MS="0": want a positive number of milliseconds.`,
		`Ignoring EVOKORE_AUDIT_KEEP="lots": want a positive number.`,
		`Unknown EVOKORE_TOOL_SCHEMA_MODE 'lazy'. Using full schemas.`,
		`Ignoring EVOKORE_SECURITY_DEFAULT_DENY="sure": want 1, true, on or yes (or 0, false, off, no). Using true, the strict choice.`,
		`Ignoring EVOKORE_TELEMETRY="enabled": want 1, true, on or yes (or 0, false, off, no). Using the default, false.`,
	} {
		if n := strings.Count(errOut, want+"\n"); code != 0 || n != 1 {
			t.Errorf("exit %d, %q said %d times, want once:\n%s", code, want, n, errOut)
		}
	}
}

// EVOKORE_TOOL_LIST_PAGINATION=true pages tools/list like "on" does.
func TestPaginationTakesTrue(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(testutil.Evokore(t), "serve")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"),
		"EVOKORE_TOOL_DISCOVERY_MODE=legacy", "EVOKORE_TOOL_LIST_PAGINATION=true", "EVOKORE_TOOL_LIST_PAGE_SIZE=5"}
	client := mcp.NewClient(&mcp.Implementation{Name: "pagination-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	page, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tools) != 5 || page.NextCursor == "" {
		t.Errorf("first page: %d tools, cursor %q; want 5 and a cursor", len(page.Tools), page.NextCursor)
	}
}

// vet --matrix says what an "approval" level means under the mode in
// force: a user reading the matrix must know whether the model or a human
// approves.
func TestVetMatrixNamesTheApprovalsMode(t *testing.T) {
	dir := t.TempDir()
	for env, want := range map[string]string{
		"":                                "Approvals: auto (",
		"EVOKORE_APPROVALS_MODE=operator": "Approvals: operator (",
		"EVOKORE_APPROVALS_MODE=token":    "this trusts the model",
		"EVOKORE_APPROVALS_MODE=operater": "Approvals: operator (", // a typo is the strict choice
	} {
		var extra []string
		if env != "" {
			extra = []string{env}
		}
		code, out, errOut := runEvokore(t, dir, extra, "vet", "--matrix", "--role", "developer")
		if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "execute_skill") {
			t.Errorf("%q: exit %d, want %q in:\n%s%s", env, code, want, out, errOut)
		}
	}
}

// vet --skills quotes what a skill file says, and a skill may come from
// anywhere (fetch_skill): what would drive the terminal (an OSC title,
// a clear screen that hides the lines above, C1 CSI, bidi overrides) is
// escaped, the problem itself still reported.
func TestVetSkillsEscapesWhatAHostileSkillSays(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFile(t, dir, "SKILLS/cat/evil/SKILL.md",
		"---\nname: evil\ndescription: x\nrequires: [\"\\e]0;pwned\\a\\e[2J\\u009b31m\\u202e\"]\n---\nbody\n")
	code, out, _ := runEvokore(t, dir, nil, "vet", "--skills", filepath.Join(dir, "SKILLS"))
	if code != 1 || !strings.Contains(out, `Missing required skill: \u001b]0;pwned\u0007\u001b[2J`) || strings.ContainsAny(out, "\x1b\x07\u009b\u202e") {
		t.Errorf("vet --skills (exit %d):\n%q", code, out)
	}
}
