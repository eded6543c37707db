package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// router is an evokore process under test, with a client on its stdio.
type router struct {
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	stderr *routertest.Buffer
	dir    string
}

// startRouter runs the evokore binary with two fixture children that
// write their pids into dir.
func startRouter(t *testing.T, extraEnv ...string) *router {
	t.Helper()
	return startRouterWith(t, defaultServers, extraEnv...)
}

// defaultServers are two fixture children that write their pids into dir.
func defaultServers(dir, fx string) map[string]any {
	return map[string]any{
		"one": map[string]any{"command": fx, "args": []string{"-pidfile", filepath.Join(dir, "one.pid"), "-stderr", "fixture one says hello"}},
		"two": map[string]any{"command": fx, "args": []string{"-pidfile", filepath.Join(dir, "two.pid")}},
	}
}

// startRouterWith runs the evokore binary (built with -race when the
// tests are) over the servers that servers(dir, fixture) returns.
func startRouterWith(t *testing.T, servers func(dir, fixture string) map[string]any, extraEnv ...string) *router {
	t.Helper()
	return launchRouter(t, nil, servers, extraEnv...)
}

// launchRouter is startRouterWith with client options (handlers).
func launchRouter(t *testing.T, opts *mcp.ClientOptions, servers func(dir, fixture string) map[string]any, extraEnv ...string) *router {
	t.Helper()
	dir := t.TempDir()
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": servers(dir, testutil.FixtureServer(t))})
	cmd := exec.Command(testutil.Evokore(t), "serve")
	cmd.Dir = dir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), testutil.RaceEnv,
		"HOME=" + dir,
		"EVOKORE_HOME=" + filepath.Join(dir, "home"),
		"EVOKORE_TOOL_DISCOVERY_MODE=legacy",
	}, extraEnv...)
	r := &router{cmd: cmd, stderr: &routertest.Buffer{}, dir: dir}
	cmd.Stderr = r.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "process-test", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 15 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, r.stderr.String())
	}
	r.cs = cs
	t.Cleanup(func() {
		_ = cs.Close()
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	})
	return r
}

// childPids waits for both children to have booted and returns their pids.
func (r *router) childPids(t *testing.T) []int {
	return r.pids(t, "one.pid", "two.pid")
}

// pids waits for the children to have booted and returns the pids written
// into the named files of the router's directory.
func (r *router) pids(t *testing.T, files ...string) []int {
	t.Helper()
	var pids []int
	routertest.WaitFor(t, "the children to boot", func() bool {
		return strings.Contains(r.stderr.String(), "Proxy bootstrap complete: ")
	})
	for _, name := range files {
		var pid int
		routertest.WaitFor(t, name, func() bool {
			b, err := os.ReadFile(filepath.Join(r.dir, name))
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			return err == nil && pid > 0
		})
		pids = append(pids, pid)
	}
	return pids
}

// killSurvivors kills, when the test ends, those of pids that outlived a
// failure (they ignore stdin EOF and would run forever), checking first
// that each pid is still one of this router's children.
func (r *router) killSurvivors(t *testing.T, pids []int) {
	t.Cleanup(func() {
		for _, p := range pids {
			if b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline"); err == nil && strings.Contains(string(b), r.dir) {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
	})
}

// misbehaving are children that make containment hard: one ignores stdin
// EOF and SIGTERM and has a helper in its group, one has a helper that
// called setsid.
func misbehaving(dir, fx string) map[string]any {
	return map[string]any{
		"stubborn": map[string]any{"command": fx, "args": []string{"-pidfile", filepath.Join(dir, "stubborn.pid"),
			"-ignore-eof", "-ignore-term", "-grandchild", filepath.Join(dir, "helper.pid")}},
		"escaper": map[string]any{"command": fx, "args": []string{"-pidfile", filepath.Join(dir, "escaper.pid"),
			"-grandchild", filepath.Join(dir, "setsid.pid"), "-setsid"}},
	}
}

var misbehavingPids = []string{"stubborn.pid", "helper.pid", "escaper.pid", "setsid.pid"}

func TestSIGKILLOfRouterLeavesNoDescendant(t *testing.T) {
	r := startRouterWith(t, misbehaving)
	pids := r.pids(t, misbehavingPids...)
	r.killSurvivors(t, pids)
	for _, p := range pids {
		if !procgroup.Alive(p) {
			t.Fatalf("process %d should be running before the kill", p)
		}
	}
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	routertest.WaitGone(t, 10*time.Second, pids...)
}

// The stubborn child costs the router two shutdown graces (stdin closed,
// SIGTERM ignored, then SIGKILL); the client waits for that.
func TestCleanExitOfRouterLeavesNoDescendant(t *testing.T) {
	r := startRouterWith(t, misbehaving)
	pids := r.pids(t, misbehavingPids...)
	if err := r.cs.Close(); err != nil {
		t.Fatalf("router did not exit cleanly on stdin EOF: %v\n%s", err, r.stderr.String())
	}
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	routertest.WaitGone(t, 10*time.Second, pids...)
}

func TestStdinEOFExitsCleanlyAndStopsChildren(t *testing.T) {
	r := startRouter(t)
	pids := r.childPids(t)
	res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "one_echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || routertest.Text(res) != "Echo: hi" {
		t.Fatalf("one_echo: %v %v", err, res)
	}
	// Closing the client session closes the router's stdin.
	if err := r.cs.Close(); err != nil {
		t.Fatalf("router did not exit cleanly on stdin EOF: %v\n%s", err, r.stderr.String())
	}
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	routertest.WaitGone(t, 2*time.Second, pids...)
	if !strings.Contains(r.stderr.String(), "[one] fixture one says hello") {
		t.Errorf("child stderr should be forwarded with its prefix:\n%s", r.stderr.String())
	}
}

// The children ignore stdin EOF, so only the parent-death signal or the
// watchdog can end them when the router is killed (a child that exits on
// EOF would leave by itself and prove nothing).
func TestSIGKILLOfRouterLeavesNoChild(t *testing.T) {
	r := startRouterWith(t, func(dir, fx string) map[string]any {
		return map[string]any{
			"one": map[string]any{"command": fx, "args": []string{"-pidfile", filepath.Join(dir, "one.pid"), "-ignore-eof"}},
			"two": map[string]any{"command": fx, "args": []string{"-pidfile", filepath.Join(dir, "two.pid"), "-ignore-eof"}},
		}
	})
	pids := r.childPids(t)
	r.killSurvivors(t, pids)
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	routertest.WaitGone(t, 2*time.Second, pids...)
}

// The watchdog is the evokore binary re-run; it must take the process
// over before the router's big packages initialise (the configuration,
// schema compilers, HTTP and the MCP SDK are what made it a second
// router's size). Run in
// watchdog mode with stdin at EOF (the router "gone") and a mark no
// process carries, it exits at once; the runtime's init trace says which
// packages initialised before it did.
func TestWatchdogRunsBeforeTheRoutersPackagesInitialise(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("the watchdog is Linux's")
	}
	cmd := exec.Command(testutil.Evokore(t))
	cmd.Env = []string{"GODEBUG=inittrace=1", "EVOKORE_PROCGROUP_WATCHDOG=EVOKORE_PROCTREE_00000000dead="}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("watchdog mode: %v\n%s", err, out)
	}
	var inits []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			inits = append(inits, f[1])
		}
	}
	if len(inits) == 0 {
		t.Fatalf("no init trace:\n%s", out)
	}
	for _, p := range inits {
		if p == "github.com/evokore/evokore/internal/config" || p == "net/http" || strings.HasPrefix(p, "github.com/modelcontextprotocol/") ||
			strings.HasPrefix(p, "github.com/santhosh-tekuri/") || strings.HasPrefix(p, "cuelang.org/") {
			t.Errorf("%s initialised before the watchdog took over (%d packages did)", p, len(inits))
		}
	}
}

func TestSIGTERMStopsChildren(t *testing.T) {
	r := startRouter(t)
	pids := r.childPids(t)
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	routertest.WaitGone(t, 5*time.Second, pids...)
}
