package server_test

//lint:file-ignore SA1019 roots pass through on purpose; see docs/decisions.md

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/server"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// instanceRouter serves cfg over HTTP, each request acting for the
// subject its test header names, in tenant "team".
func instanceRouter(t *testing.T, dir, cfg string, env map[string]string) (*routertest.Harness, string) {
	t.Helper()
	h := routertest.NewWithConfig(t, dir, cfg, env)
	ts := httptest.NewServer(h.HTTP(func(r *http.Request) ingress.SessionOptions {
		return ingress.SessionOptions{Identity: session.Identity{Subject: r.Header.Get(subjectHeader), Tenant: "team"}}
	}, nil))
	t.Cleanup(ts.Close)
	return h, ts.URL
}

// clientWithRoots is connectWithRoots of 2025-11-25 that returns the
// client too, whose roots the test changes.
func clientWithRoots(t *testing.T, url, subject, dir string) (*mcp.Client, *mcp.ClientSession) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: subject, Version: "1"}, nil)
	c.AddRoots(&mcp.Root{URI: "file://" + dir, Name: subject})
	ct := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: asSubject{subject}}}
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return c, cs
}

// A child whose scope is subject gives each subject an instance of its
// own, told that subject's roots: alice and bob (sessions of 2025-11-25)
// each see only their own folder on server-filesystem, and so do carol
// and dave (of 2026-07-28, sessionless: the call that starts each one's
// instance asks for their roots by input_required first). A shared
// server-filesystem keeps the folder its arguments give it whoever calls.
// The catalog lists the child's tools once, and its status says its
// scope and instances.
func TestSubjectInstancesSeeOnlyTheirCallersRoots(t *testing.T) {
	if testing.Short() {
		t.Skip("npm reference servers: not in -short")
	}
	dir := t.TempDir()
	args, aliceDir, bobDir, carolDir, daveDir, sharedDir := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	fs := testutil.NPMServer(t, "server-filesystem")
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fs":     map[string]any{"command": "node", "args": []string{fs, args}, "scope": "subject"},
		"shared": map[string]any{"command": "node", "args": []string{fs, sharedDir}},
	}})
	// legacy lists every tool, so the test sees how often fs's are.
	h, url := instanceRouter(t, dir, cfg, map[string]string{"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "20000", "EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	aliceClient, alice := clientWithRoots(t, url, "alice", aliceDir)
	h.Booted()
	bob := connectWithRoots(t, url, "bob", "2025-11-25", bobDir)
	carol := connectWithRoots(t, url, "carol", "2026-07-28", carolDir)
	dave := connectWithRoots(t, url, "dave", "2026-07-28", daveDir)
	// server-filesystem takes its roots once it is initialized, in the
	// background: each caller's first answer may still be its arguments'.
	for who, want := range map[*mcp.ClientSession]string{alice: aliceDir, bob: bobDir, carol: carolDir, dave: daveDir} {
		routertest.WaitFor(t, "an instance told its caller's roots", func() bool { return allowed(t, who, "fs_list_allowed_directories") == want })
		if got := allowed(t, who, "shared_list_allowed_directories"); got != sharedDir {
			t.Errorf("the shared child's folders are %q, want %q", got, sharedDir)
		}
	}
	// Each of alice's and bob's instances keeps its own caller's roots
	// whoever called last.
	if got := allowed(t, alice, "fs_list_allowed_directories"); got != aliceDir {
		t.Errorf("alice sees %q after bob's calls, want %q", got, aliceDir)
	}
	// alice's new root reaches her instance, not bob's.
	more := t.TempDir()
	aliceClient.AddRoots(&mcp.Root{URI: "file://" + more, Name: "more"})
	routertest.WaitFor(t, "alice's instance told her new root", func() bool {
		return allowed(t, alice, "fs_list_allowed_directories") == aliceDir+"\n"+more
	})
	if got := allowed(t, bob, "fs_list_allowed_directories"); got != bobDir {
		t.Errorf("bob sees %q after alice's roots changed, want %q", got, bobDir)
	}
	n := 0
	for _, name := range routertest.ToolNames(t, alice) {
		if name == "fs_list_allowed_directories" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("fs_list_allowed_directories listed %d times, want once", n)
	}
	st := instanceStatus(t, alice, "fs")
	if st.Scope != "subject" || st.Instances != 4 {
		t.Errorf("fs status: scope %q, %d instances; want subject, 4", st.Scope, st.Instances)
	}
}

// fsStatus is what these tests read of a child's status.
type fsStatus struct {
	ID        string `json:"id"`
	Scope     string `json:"scope"`
	Instances int    `json:"instances"`
}

func instanceStatus(t *testing.T, cs *mcp.ClientSession, id string) fsStatus {
	t.Helper()
	var st struct {
		Servers []fsStatus `json:"servers"`
	}
	if err := json.Unmarshal([]byte(routertest.Text(routertest.Call(t, cs, "proxy_server_status", map[string]any{}))), &st); err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Servers {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no server %q in status", id)
	return fsStatus{}
}

// instancePid is the pid of the fixture instance answering cs.
func instancePid(t *testing.T, cs *mcp.ClientSession) int {
	t.Helper()
	text := routertest.Text(routertest.Call(t, cs, "fx_pid", map[string]any{}))
	pid, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil {
		t.Fatalf("fx_pid answered %q", text)
	}
	return pid
}

// Instances of a child whose scope is session: one per session; past
// EVOKORE_INSTANCE_MAX a new caller is refused naming the setting; an
// instance idle past EVOKORE_INSTANCE_IDLE_MS ends (its process is gone)
// and the caller's next call starts another; a killed instance is
// started again for the next call.
func TestInstancesCappedReapedAndRestarted(t *testing.T) {
	dir := t.TempDir()
	// No cooldown: bob's refusal at the cap is an error result, which
	// would cool his identical call once an instance is free.
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fx": map[string]any{"command": testutil.FixtureServer(t), "args": []string{}, "scope": "session", "cooldownMs": 0},
	}})
	h, url := instanceRouter(t, dir, cfg, map[string]string{"EVOKORE_INSTANCE_MAX": "2", "EVOKORE_INSTANCE_IDLE_MS": "1500"})
	a := connectWithRoots(t, url, "alice", "2025-11-25", t.TempDir())
	h.Booted()
	b := connectWithRoots(t, url, "alice", "2025-11-25", t.TempDir())
	pa, pb := instancePid(t, a), instancePid(t, b)
	if pa == pb {
		t.Fatalf("two sessions share the instance %d", pa)
	}
	c := connectWithRoots(t, url, "bob", "2025-11-25", t.TempDir())
	refused := routertest.Call(t, c, "fx_pid", map[string]any{})
	if text := routertest.Text(refused); !refused.IsError || !strings.Contains(text, "EVOKORE_INSTANCE_MAX") {
		t.Errorf("a third instance past the cap of 2: %q", text)
	}

	// Killed: the next call waits for the restart.
	if err := syscall.Kill(pa, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	routertest.WaitGone(t, 10*time.Second, pa)
	routertest.WaitFor(t, "the router saw the instance exit", func() bool {
		return strings.Contains(h.Stderr.String(), "Child server 'fx' exited")
	})
	again := instancePid(t, a)
	if again == pa || again == pb {
		t.Errorf("after the kill a got pid %d (before %d, b's %d)", again, pa, pb)
	}

	// Idle: both instances end, and the processes with them.
	routertest.WaitGone(t, 30*time.Second, again, pb)
	routertest.WaitFor(t, "no instance listed", func() bool { return instanceStatus(t, c, "fx").Instances == 0 })
	if p := instancePid(t, c); p == again || p == pb {
		t.Errorf("bob's first instance has an ended instance's pid %d", p)
	}
}

// Every instance answers to the definitions the configured child listed
// (and the pins checked): an instance that boots defining echo otherwise
// (its description is read from a file the test changed after the
// template booted) is refused that tool, naming the pinned definition,
// while its tools defined alike still run.
func TestInstanceHeldToTheListedDefinitions(t *testing.T) {
	dir := t.TempDir()
	desc := testutil.WriteFile(t, dir, "desc.txt", "Echoes as listed.")
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fx": map[string]any{"command": "sh", "args": []string{"-c", `exec "$0" -echo "$(cat "$1")"`, testutil.FixtureServer(t), desc}, "scope": "subject"},
	}})
	h, url := instanceRouter(t, dir, cfg, nil)
	a := connectWithRoots(t, url, "alice", "2025-11-25", t.TempDir())
	h.Booted()
	if r := routertest.Call(t, a, "fx_echo", map[string]any{"message": "hi"}); r.IsError {
		t.Fatalf("alice's instance, defined as listed: %q", routertest.Text(r))
	}
	testutil.WriteFile(t, dir, "desc.txt", "Echoes, and now something else.")
	b := connectWithRoots(t, url, "bob", "2025-11-25", t.TempDir())
	r := routertest.Call(t, b, "fx_echo", map[string]any{"message": "hi"})
	if text := routertest.Text(r); !r.IsError || !strings.Contains(text, "pinned definition") {
		t.Errorf("bob's instance defines echo otherwise, yet: %q", text)
	}
	if r := routertest.Call(t, b, "fx_pid", map[string]any{}); r.IsError {
		t.Errorf("bob's pid, defined alike: %q", routertest.Text(r))
	}
}

// An instance being stopped still runs, so it counts toward
// EVOKORE_INSTANCE_MAX until its process has ended, and one slow to stop
// holds up the reaping of no other. alice's instance ignores its stdin
// closing and SIGTERM (it ends at SIGKILL, two shutdown graces after it
// was reaped); while it lingers bob's instance starts (2 running, the
// cap), carol is refused naming the setting, and bob's instance, idle in
// turn, is reaped and gone while alice's still runs.
func TestInstancesStoppingCountTowardTheCap(t *testing.T) {
	dir := t.TempDir()
	wedge := testutil.WriteFile(t, dir, "wedge", "")
	if err := os.Remove(wedge); err != nil {
		t.Fatal(err)
	}
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fx": map[string]any{"command": "sh", "args": []string{"-c", `if [ -e "$1" ]; then exec "$0" -ignore-eof -ignore-term; fi; exec "$0"`, testutil.FixtureServer(t), wedge},
			"scope": "subject", "cooldownMs": 0},
	}})
	h := routertest.NewWithServerOptions(t, dir, cfg, map[string]string{"EVOKORE_INSTANCE_MAX": "2", "EVOKORE_INSTANCE_IDLE_MS": "1000"},
		func(o *server.Options) { o.Settings.Children.ShutdownGrace = 4 * time.Second })
	ts := httptest.NewServer(h.HTTP(func(r *http.Request) ingress.SessionOptions {
		return ingress.SessionOptions{Identity: session.Identity{Subject: r.Header.Get(subjectHeader), Tenant: "team"}}
	}, nil))
	t.Cleanup(ts.Close)
	alice := connectWithRoots(t, ts.URL, "alice", "2025-11-25", t.TempDir())
	h.Booted()
	testutil.WriteFile(t, dir, "wedge", "")
	pa := instancePid(t, alice)
	if err := os.Remove(wedge); err != nil {
		t.Fatal(err)
	}
	routertest.WaitFor(t, "alice's instance reaped", func() bool { return instanceStatus(t, alice, "fx").Instances == 0 })
	if !procgroup.Alive(pa) {
		t.Fatalf("alice's instance %d ended at once; the test needs it to linger", pa)
	}
	bob := connectWithRoots(t, ts.URL, "bob", "2025-11-25", t.TempDir())
	pb := instancePid(t, bob)
	carol := connectWithRoots(t, ts.URL, "carol", "2025-11-25", t.TempDir())
	r := routertest.Call(t, carol, "fx_pid", map[string]any{})
	if text := routertest.Text(r); !r.IsError || !strings.Contains(text, "EVOKORE_INSTANCE_MAX") {
		t.Errorf("carol's instance would be the third running (alice's stopping, bob's) past the cap of 2: %q", text)
	}
	routertest.WaitGone(t, 30*time.Second, pb)
	if !procgroup.Alive(pa) {
		t.Errorf("bob's instance was reaped only once alice's, slow to stop, had ended")
	}
	routertest.WaitGone(t, 30*time.Second, pa)
	if p := instancePid(t, carol); p == pa || p == pb {
		t.Errorf("carol got an ended instance's pid %d", p)
	}
}
