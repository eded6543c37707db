//go:build linux

package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// descendants lists the processes under pid whose executable is exe,
// leaving out the launcher's watchdog (the router's own executable under
// another name).
func descendants(t *testing.T, pid int, exe string) []int {
	t.Helper()
	want, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: state, ppid.
		i := strings.LastIndexByte(string(stat), ')')
		if f := strings.Fields(string(stat[i+1:])); i > 0 && len(f) > 1 {
			parent[p], _ = strconv.Atoi(f[1])
		}
	}
	var out []int
	for p := range parent {
		under := false
		for q, seen := parent[p], 0; q > 1 && seen < 64; q, seen = parent[q], seen+1 {
			if q == pid {
				under = true
				break
			}
		}
		if !under {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
		if strings.HasPrefix(string(cmdline), "evokore-watchdog\x00") {
			continue
		}
		if fi, err := os.Stat(filepath.Join("/proc", strconv.Itoa(p), "exe")); err == nil && os.SameFile(fi, want) {
			out = append(out, p)
		}
	}
	return out
}

// A config that lists evokore itself beside other servers (a .mcp.json
// or ~/.claude.json written for a client) serves the other servers and
// never starts evokore inside evokore: not by path, not through a
// symlink on PATH, and through a wrapper the executable check cannot see
// through, no deeper than one level.
func TestAConfigListingEvokoreItselfStartsNoRouterInside(t *testing.T) {
	evokore := testutil.Evokore(t)
	bin := t.TempDir()
	if err := os.Symlink(evokore, filepath.Join(bin, "my-router")); err != nil {
		t.Fatal(err)
	}
	r := launchRouter(t, nil, func(dir, fx string) map[string]any {
		return map[string]any{
			"fx":      map[string]any{"command": fx},
			"self":    map[string]any{"command": evokore, "args": []string{"serve"}},
			"aliased": map[string]any{"command": "my-router", "args": []string{"serve"}},
		}
	}, "PATH="+bin+":"+os.Getenv("PATH"))
	if text, isErr := routertest.CallText(t, r.cs, "fx_echo", map[string]any{"message": "hi"}); isErr || !strings.Contains(text, "hi") {
		t.Fatalf("fx_echo = %v %q\n%s", isErr, text, r.stderr.String())
	}
	for _, id := range []string{"self", "aliased"} {
		routertest.WaitFor(t, id+" refused", func() bool {
			return strings.Contains(r.stderr.String(), "server '"+id+"' is this evokore itself")
		})
	}
	if got := descendants(t, r.cmd.Process.Pid, evokore); len(got) != 0 {
		t.Errorf("evokore started evokore: %v\n%s", got, r.stderr.String())
	}
	// Every child carries the mark that stops a wrapped router.
	if text, _ := routertest.CallText(t, r.cs, "fx_env", map[string]any{"name": "EVOKORE_ROUTER_DEPTH"}); strings.TrimSpace(text) != "EVOKORE_ROUTER_DEPTH=1" {
		t.Errorf("the child's EVOKORE_ROUTER_DEPTH = %q, want 1", text)
	}
	text, _ := routertest.CallText(t, r.cs, "proxy_server_status", map[string]any{})
	if !strings.Contains(text, "is this evokore itself") {
		t.Errorf("status does not say why: %s", text)
	}

	// Through a wrapper: the router it reaches starts no children.
	w := launchRouter(t, nil, func(dir, fx string) map[string]any {
		return map[string]any{
			"fx":      map[string]any{"command": fx},
			"wrapped": map[string]any{"command": "sh", "args": []string{"-c", "exec " + evokore + " serve"}},
		}
	})
	routertest.WaitFor(t, "the wrapped router to refuse its children", func() bool {
		s := w.stderr.String()
		return strings.Contains(s, "[wrapped] ") && strings.Contains(s, "server 'wrapped' not started: this evokore was itself started by an evokore") &&
			strings.Contains(s, "server 'fx' not started")
	})
	if text, isErr := routertest.CallText(t, w.cs, "fx_echo", map[string]any{"message": "still"}); isErr || !strings.Contains(text, "still") {
		t.Fatalf("fx_echo = %v %q", isErr, text)
	}
	if got := descendants(t, w.cmd.Process.Pid, evokore); len(got) != 1 {
		t.Errorf("routers under the router: %v, want the one wrapped\n%s", got, w.stderr.String())
	}
	if got := descendants(t, w.cmd.Process.Pid, testutil.FixtureServer(t)); len(got) != 1 {
		t.Errorf("fixture servers under the router: %v, want only its own", got)
	}
}

// vet reports a server entry that is evokore itself as an error at the
// command's position.
func TestVetReportsASelfReference(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"mcpServers": map[string]any{
		"evokore": map[string]any{"command": testutil.Evokore(t), "args": []string{"serve"}},
	}})
	code, out, _ := runEvokore(t, dir, nil, "vet")
	if code != 1 || !regexp.MustCompile(`mcp\.config\.json:\d+:\d+: .*server 'evokore' is this evokore itself.*\[self-reference\]`).MatchString(out) {
		t.Errorf("vet: exit %d\n%s", code, out)
	}
}

// A nested evokore (another installation of it, which the self-reference
// check does not take for this one, serving its own natives as a child)
// lists its run_code here as me2_run_code: the rules written for
// run_code bind it, as they bind the router's own.
func TestRunCodeOfANestedEvokoreFollowsTheRulesForRunCode(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "another-evokore")
	b, err := os.ReadFile(testutil.Evokore(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"me2": map[string]any{"command": other, "args": []string{"serve"},
			"env": map[string]string{"EVOKORE_HOME": filepath.Join(dir, "home2"), "HOME": dir, "EVOKORE_TOOL_DISCOVERY_MODE": "legacy"}}}})
	testutil.WriteFile(t, dir, "permissions.yml", "rules:\n  run_code: deny\n  execute_skill: require_approval\n")
	h := routertest.NewWithConfig(t, dir, cfg, map[string]string{"EVOKORE_APPROVALS_MODE": "operator"})
	cs := h.Connect(nil)
	h.Booted()
	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "me2_run_code", Arguments: map[string]any{"code": "return 1;"}})
	if err == nil || !strings.Contains(err.Error(), "me2_run_code") || !strings.Contains(strings.ToLower(err.Error()), "denied") {
		t.Errorf("me2_run_code under a rule denying run_code: %v", err)
	}
	res := routertest.Call(t, cs, "me2_execute_skill", map[string]any{"skill_name": "x"})
	if id := routertest.HeldApproval(t, res); id == "" {
		t.Errorf("me2_execute_skill under a rule holding execute_skill: %q", routertest.Text(res))
	}
}
