package server_test

import (
	"context"
	"encoding/json"
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
