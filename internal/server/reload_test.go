package server_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/server"
	rt "github.com/evokore/evokore/internal/testutil/routertest"
)

// reloadHarness is a router serving the config and permissions written
// into a fresh directory, listing every tool (legacy mode) so that the
// tests see what a reload adds and removes.
func reloadHarness(t *testing.T, servers map[string]any, perms string) *rt.Harness {
	t.Helper()
	dir := t.TempDir()
	writeConfig(t, dir, servers)
	if err := os.WriteFile(filepath.Join(dir, "permissions.yml"), []byte(perms), 0o644); err != nil {
		t.Fatal(err)
	}
	return rt.NewWithConfig(t, dir, filepath.Join(dir, "mcp.config.json"), map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
}

// writeConfig replaces mcp.config.json the way editors save: a new file
// renamed over the old one.
func writeConfig(t *testing.T, dir string, servers map[string]any) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"servers": servers})
	if err != nil {
		t.Fatal(err)
	}
	writeAtomic(t, filepath.Join(dir, "mcp.config.json"), string(b))
}

func writeAtomic(t *testing.T, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func pidOf(t *testing.T, cs *mcp.ClientSession, tool string) int {
	t.Helper()
	text, isErr := rt.CallText(t, cs, tool, map[string]any{})
	pid, err := strconv.Atoi(text)
	if isErr || err != nil {
		t.Fatalf("%s: %q", tool, text)
	}
	return pid
}

// A reload while a session is calling: the kept child keeps its process
// and answers throughout; the added child's tools appear with
// tools/list_changed; the removed child finishes the call it was running,
// then its tools are gone and its process stops; the changed child is
// restarted; the changed permission rule holds from the next call.
func TestReloadChangesChildrenAndRulesWhileCalling(t *testing.T) {
	fx := func(args ...string) map[string]any { return rt.Fixture(t, args...) }
	h := reloadHarness(t, map[string]any{
		"keep":   fx(),
		"gone":   fx(),
		"change": fx("-echo", "version one"),
	}, "rules:\n  keep_echo: allow\n")
	var listChanged atomic.Int64
	cs := h.Connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged.Add(1) }})
	h.Booted()
	keepPid := pidOf(t, cs, "keep_pid")
	changePid := pidOf(t, cs, "change_pid")
	gonePid := pidOf(t, cs, "gone_pid")
	if text, isErr := rt.CallText(t, cs, "keep_echo", map[string]any{"message": "before"}); isErr || text != "Echo: before" {
		t.Fatalf("keep_echo before the reload: %q", text)
	}

	// Calls in flight across the reload: one to the kept child, one to
	// the child the reload removes.
	type answer struct {
		text  string
		isErr bool
		err   error
	}
	slow := func(tool string) <-chan answer {
		out := make(chan answer, 1)
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"ms": 1500}})
			if err != nil {
				out <- answer{err: err}
				return
			}
			out <- answer{text: rt.Text(res), isErr: res.IsError}
		}()
		return out
	}
	keepSlow, goneSlow := slow("keep_slow"), slow("gone_slow")
	rt.WaitFor(t, "the slow calls to reach their children", func() bool {
		return h.Server.OpenCalls("keep") == 1 && h.Server.OpenCalls("gone") == 1
	})
	// And a session calling the kept child all along.
	stop := make(chan struct{})
	var calling sync.WaitGroup
	var failures []string
	var failMu sync.Mutex
	calling.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "keep_pid", Arguments: map[string]any{}})
			failMu.Lock()
			if err != nil {
				failures = append(failures, err.Error())
			} else if rt.Text(res) != strconv.Itoa(keepPid) {
				failures = append(failures, rt.Text(res))
			}
			failMu.Unlock()
		}
	})

	before := listChanged.Load()
	writeConfig(t, h.Dir, map[string]any{
		"keep":   fx(),
		"change": fx("-echo", "version two"),
		"added":  fx(),
	})
	writeAtomic(t, filepath.Join(h.Dir, "permissions.yml"), "rules:\n  keep_echo: deny\n")
	rep, err := h.Server.Reload()
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	if !slices.Equal(rep.Servers.Added, []string{"added"}) || !slices.Equal(rep.Servers.Removed, []string{"gone"}) ||
		!slices.Equal(rep.Servers.Restarted, []string{"change"}) || !slices.Equal(rep.Servers.Kept, []string{"keep"}) {
		t.Fatalf("reload changed %+v", rep.Servers)
	}

	for name, ch := range map[string]<-chan answer{"keep_slow": keepSlow, "gone_slow": goneSlow} {
		a := <-ch
		if a.err != nil || a.isErr || a.text != "slept 1500ms" {
			t.Errorf("%s in flight across the reload answered %+v", name, a)
		}
	}

	rt.WaitFor(t, "the added child's tools with tools/list_changed", func() bool {
		return listChanged.Load() > before && slices.Contains(rt.ToolNames(t, cs), "added_echo")
	})
	names := rt.ToolNames(t, cs)
	if slices.Contains(names, "gone_echo") {
		t.Errorf("the removed child's tools are still listed: %v", names)
	}
	close(stop)
	calling.Wait()
	if len(failures) > 0 {
		t.Errorf("calls to the kept child failed across the reload: %v", failures)
	}

	if got := pidOf(t, cs, "keep_pid"); got != keepPid {
		t.Errorf("the kept child was restarted: pid %d, was %d", got, keepPid)
	}
	if got := pidOf(t, cs, "change_pid"); got == changePid {
		t.Errorf("the changed child was not restarted (pid %d)", got)
	}
	if text, _ := rt.CallText(t, cs, "added_echo", map[string]any{"message": "hi"}); text != "Echo: hi" {
		t.Errorf("added_echo: %q", text)
	}
	rt.WaitGone(t, 10e9, gonePid, changePid)

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "keep_echo", Arguments: map[string]any{"message": "after"}})
	if err == nil || !strings.Contains(err.Error(), policy.DeniedText("keep_echo")) {
		t.Errorf("keep_echo after the rule changed to deny: %v %q", err, rt.Text(res))
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gone_echo", Arguments: map[string]any{"message": "x"}}); err == nil {
		t.Error("a removed child's tool is still callable")
	}
}

// A file that does not load is refused whole, at file:line:col, on
// stderr, in the status resource and in Problems; the configuration in
// force keeps serving, children and rules alike.
func TestReloadRefusesABrokenFileAndKeepsServing(t *testing.T) {
	h := reloadHarness(t, map[string]any{"keep": rt.Fixture(t)}, "rules:\n  keep_echo: allow\n")
	cs := h.Connect(nil)
	h.Booted()
	keepPid := pidOf(t, cs, "keep_pid")
	goodConfig, err := os.ReadFile(filepath.Join(h.Dir, "mcp.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, file, text, at string
	}{
		{"bad JSON", "mcp.config.json", "{\n  \"servers\": {\n    \"keep\": {\"command\": \"x\",}\n  }\n}\n", "mcp.config.json:3:"},
		{"CUE violation", "mcp.config.json", "{\n  \"servers\": {\n    \"keep\": {\"command\": 42}\n  }\n}\n", "mcp.config.json:3:"},
		{"unknown field", "mcp.config.json", "{\n  \"servers\": {},\n  \"serverz\": {}\n}\n", "mcp.config.json:3:"},
		{"bad YAML", "permissions.yml", "rules:\n  keep_echo: deny\n   bad: [\n", "permissions.yml:"},
		{"CUE violation in YAML", "permissions.yml", "rules:\n  keep_echo: sometimes\n", "permissions.yml:2:"},
		{"undefined active role", "permissions.yml", "roles:\n  ops:\n    default_permission: allow\nactive_role: opz\n", "permissions.yml:4:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(h.Dir, c.file)
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			writeAtomic(t, path, c.text)
			t.Cleanup(func() { writeAtomic(t, path, string(good)) })
			_, err = h.Server.Reload()
			if err == nil || !strings.Contains(err.Error(), c.at) {
				t.Fatalf("reload of a broken %s: %v", c.file, err)
			}
			if !strings.Contains(h.Stderr.String(), "Reload refused") || !strings.Contains(h.Stderr.String(), c.at) {
				t.Errorf("stderr does not report the refusal at %s:\n%s", c.at, h.Stderr.String())
			}
			t.Log(err)
			st := h.Server.ReloadStatus()
			if st.Generation != 1 || st.Refused == nil || len(st.Errors) == 0 || !strings.Contains(st.Errors[0], c.at) {
				t.Errorf("reload status: %+v", st)
			}
			res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "evokore://server/status"})
			if err != nil {
				t.Fatal(err)
			}
			if text := res.Contents[0].Text; !strings.Contains(text, "reload refused") || !strings.Contains(text, c.at) {
				t.Errorf("the status resource does not show the refusal:\n%s", text)
			}
			// The old configuration serves: same child, same rule.
			if got := pidOf(t, cs, "keep_pid"); got != keepPid {
				t.Errorf("the child was restarted by a refused reload: pid %d, was %d", got, keepPid)
			}
			if text, isErr := rt.CallText(t, cs, "keep_echo", map[string]any{"message": "still"}); isErr || text != "Echo: still" {
				t.Errorf("keep_echo after a refused reload: %q", text)
			}
		})
	}
	// Fixed, the next reload goes through and the refusal is forgotten.
	writeAtomic(t, filepath.Join(h.Dir, "mcp.config.json"), string(goodConfig))
	if _, err := h.Server.Reload(); err != nil {
		t.Fatal(err)
	}
	if st := h.Server.ReloadStatus(); st.Refused != nil || st.Generation != 2 || len(h.Server.Problems()) != 0 {
		t.Errorf("after a good reload: %+v, problems %v", st, h.Server.Problems())
	}
	// A deleted file is refused too: it would stop every child.
	if err := os.Remove(filepath.Join(h.Dir, "mcp.config.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Server.Reload(); err == nil || !strings.Contains(err.Error(), "removed") {
		t.Errorf("reload after mcp.config.json was deleted: %v", err)
	}
	if got := pidOf(t, cs, "keep_pid"); got != keepPid {
		t.Errorf("deleting mcp.config.json restarted the child: pid %d, was %d", got, keepPid)
	}
}

// The watcher reloads after the ways editors save: vim's backup-and-write,
// a truncate and a write in two steps, a new file renamed over the old
// one. It waits for the burst to settle, so the half-written file of the
// second way is never what serves.
func TestWatcherReloadsAfterEditorSaves(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "mcp.config.json")
	configText := func(ids ...string) string {
		servers := map[string]any{}
		for _, id := range ids {
			servers[id] = map[string]any{"command": "never-started", "disabled": true}
		}
		b, err := json.Marshal(map[string]any{"servers": servers})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if err := os.WriteFile(cfgPath, []byte(configText("a")), 0o644); err != nil {
		t.Fatal(err)
	}
	h := rt.NewWithServerOptions(t, dir, cfgPath, nil, func(o *server.Options) { o.Watch = true })
	cs := h.Connect(nil)
	serving := func(ids ...string) func() bool {
		return func() bool {
			var got []string
			for _, st := range h.Server.Status() {
				got = append(got, st.ID)
			}
			return slices.Equal(got, ids)
		}
	}
	rt.WaitFor(t, "the first configuration", serving("a"))

	// vim: probe file, original renamed to a backup, new file written,
	// backup removed.
	probe := filepath.Join(dir, "4913")
	must(t, os.WriteFile(probe, nil, 0o644))
	must(t, os.Remove(probe))
	must(t, os.Rename(cfgPath, cfgPath+"~"))
	must(t, os.WriteFile(cfgPath, []byte(configText("a", "b")), 0o644))
	must(t, os.Remove(cfgPath+"~"))
	rt.WaitFor(t, "the reload after vim's save", serving("a", "b"))

	// Truncate, then write in two steps.
	text := configText("a", "b", "c")
	f, err := os.OpenFile(cfgPath, os.O_WRONLY|os.O_TRUNC, 0o644)
	must(t, err)
	_, err = f.WriteString(text[:len(text)/2])
	must(t, err)
	must(t, f.Sync())
	_, err = f.WriteString(text[len(text)/2:])
	must(t, err)
	must(t, f.Close())
	rt.WaitFor(t, "the reload after a two-step write", serving("a", "b", "c"))

	// A new file renamed over the old one, and permissions.yml beside it.
	writeAtomic(t, cfgPath, configText("c"))
	rt.WaitFor(t, "the reload after an atomic save", serving("c"))
	writeAtomic(t, filepath.Join(dir, "permissions.yml"), "rules:\n  proxy_server_status: deny\n")
	rt.WaitFor(t, "the permissions.yml reload", func() bool {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "proxy_server_status", Arguments: map[string]any{}})
		return err != nil && strings.Contains(err.Error(), policy.DeniedText("proxy_server_status"))
	})
	if st := h.Server.ReloadStatus(); st.Refused != nil {
		t.Errorf("the last reload was refused: %+v", st)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A reload that changes the active discovery profile changes what every
// session lists, and tells them.
func TestReloadSwapsTheProfileAndTellsSessions(t *testing.T) {
	dir := t.TempDir()
	cfg := func(visible ...string) map[string]any {
		return map[string]any{"servers": map[string]any{}, "discovery": map[string]any{
			"activeProfile": "mine",
			"profiles":      map[string]any{"mine": map[string]any{"alwaysVisible": visible}},
		}}
	}
	path := testutilWriteJSON(t, dir, cfg("search_skills"))
	h := rt.NewWithConfig(t, dir, path, nil)
	var listChanged atomic.Int64
	sessions := []*mcp.ClientSession{
		h.Connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged.Add(1) }}),
		h.Connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged.Add(1) }}),
	}
	for _, cs := range sessions {
		if names := rt.ToolNames(t, cs); slices.Contains(names, "resolve_workflow") || !slices.Contains(names, "search_skills") {
			t.Fatalf("the first profile lists %v", names)
		}
	}
	before := listChanged.Load()
	testutilWriteJSON(t, dir, cfg("search_skills", "resolve_workflow"))
	if _, err := h.Server.Reload(); err != nil {
		t.Fatal(err)
	}
	rt.WaitFor(t, "both sessions told", func() bool { return listChanged.Load() >= before+2 })
	for _, cs := range sessions {
		if names := rt.ToolNames(t, cs); !slices.Contains(names, "resolve_workflow") {
			t.Errorf("after the reload the profile lists %v", names)
		}
	}
}

func testutilWriteJSON(t *testing.T, dir string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mcp.config.json")
	writeAtomic(t, path, string(b))
	return path
}

// Over streamable HTTP the same views follow a reload: a session is told
// of the added child's tools, and a broken file leaves it served as
// before.
func TestReloadReachesHTTPSessions(t *testing.T) {
	h := reloadHarness(t, map[string]any{"keep": rt.Fixture(t)}, "")
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)
	var listChanged atomic.Int64
	c := mcp.NewClient(&mcp.Implementation{Name: "http-reload", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged.Add(1) },
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	h.Booted()
	keepPid := pidOf(t, cs, "keep_pid")

	before := listChanged.Load()
	writeConfig(t, h.Dir, map[string]any{"keep": rt.Fixture(t), "added": rt.Fixture(t)})
	if _, err := h.Server.Reload(); err != nil {
		t.Fatal(err)
	}
	rt.WaitFor(t, "added_echo over HTTP with list_changed", func() bool {
		return listChanged.Load() > before && slices.Contains(rt.ToolNames(t, cs), "added_echo")
	})
	writeAtomic(t, filepath.Join(h.Dir, "mcp.config.json"), "{\"servers\": [}")
	if _, err := h.Server.Reload(); err == nil {
		t.Fatal("a broken file was accepted")
	}
	if got := pidOf(t, cs, "keep_pid"); got != keepPid {
		t.Errorf("the kept child changed over HTTP: pid %d, was %d", got, keepPid)
	}
	if text, _ := rt.CallText(t, cs, "added_echo", map[string]any{"message": "http"}); text != "Echo: http" {
		t.Errorf("added_echo after a refused reload: %q", text)
	}
}

// On a fresh machine EVOKORE_HOME does not exist yet: the watcher creates
// it instead of warning that it cannot watch it, and a config written
// there later is served.
func TestWatcherOnAFreshHomeCreatesItAndSeesTheConfig(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	cfgPath := filepath.Join(home, "mcp.config.json")
	h := rt.NewWithServerOptions(t, dir, cfgPath, nil, func(o *server.Options) { o.Watch = true })
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(h.Stderr.String())
		}
	})
	h.Connect(nil)
	rt.WaitFor(t, "EVOKORE_HOME", func() bool {
		st, err := os.Stat(home)
		return err == nil && st.IsDir()
	})
	writeAtomic(t, cfgPath, `{"servers":{"a":{"command":"never-started","disabled":true}}}`)
	rt.WaitFor(t, "the config written into the new home", func() bool {
		st := h.Server.Status()
		return len(st) == 1 && st[0].ID == "a"
	})
	if strings.Contains(h.Stderr.String(), "Cannot watch") {
		t.Errorf("the router warned about the fresh home:\n%s", h.Stderr.String())
	}
}
