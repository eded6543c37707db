package server_test

//lint:file-ignore SA1019 sampling, roots and logging pass through on purpose; see docs/decisions.md

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

var jsonMarshal = json.Marshal

var legacy = map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"}

func TestInitializeReportsServerAndCapabilities(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	ir := cs.InitializeResult()
	if ir.ServerInfo.Name != "evokore" || ir.ServerInfo.Version != "test" {
		t.Errorf("serverInfo = %+v", ir.ServerInfo)
	}
	c := ir.Capabilities
	if c.Tools == nil || !c.Tools.ListChanged || c.Resources == nil || c.Prompts == nil || c.Logging == nil {
		t.Errorf("capabilities = %+v", c)
	}
	if !strings.Contains(ir.Instructions, "discover_tools") {
		t.Errorf("instructions = %q", ir.Instructions)
	}
}

func TestLegacyListsAndCallsProxiedTools(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, legacy)
	cs := h.Connect(nil)
	h.Booted()
	names := routertest.ToolNames(t, cs)
	for _, want := range []string{"describe_tool", "fx_echo", "fx_slow", "fx_progress"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	// Natives come first, then the child's tools in the child's order.
	if i, j := slices.Index(names, "describe_tool"), slices.Index(names, "fx_echo"); i > j {
		t.Errorf("natives should precede proxied tools: %v", names)
	}
	res := routertest.Call(t, cs, "fx_echo", map[string]any{"message": "hello"})
	if res.IsError || routertest.Text(res) != "Echo: hello" {
		t.Errorf("fx_echo = %+v", res)
	}
	if !strings.Contains(h.Stderr.String(), "[EVOKORE] Proxy bootstrap complete: ") {
		t.Errorf("no boot sentinel in stderr:\n%s", h.Stderr.String())
	}
}

func TestUnknownToolIsMethodNotFound(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != -32601 || we.Message != "Unknown tool: no_such_tool" {
		t.Fatalf("err = %#v", err)
	}
}

func TestInvalidArgumentsListsEveryViolation(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, legacy)
	cs := h.Connect(nil)
	h.Booted()
	res := routertest.Call(t, cs, "fx_slow", map[string]any{"ms": "soon"})
	if !res.IsError || !strings.Contains(routertest.Text(res), "Invalid arguments for 'fx_slow'") || !strings.Contains(routertest.Text(res), "/ms") {
		t.Errorf("result = %q", routertest.Text(res))
	}
	res = routertest.Call(t, cs, "discover_tools", map[string]any{"query": 1, "limit": true})
	text := routertest.Text(res)
	if !res.IsError || !strings.Contains(text, "/query") || !strings.Contains(text, "/limit") {
		t.Errorf("every violation should be listed: %q", text)
	}
}

func TestCollisionKeepsFirstInConfigOrder(t *testing.T) {
	// "a" exposes b_echo → a_b_echo; "a_b" exposes echo → a_b_echo too.
	servers := map[string]any{
		"a":   routertest.Fixture(t, "-alias", "b_echo"),
		"a_b": routertest.Fixture(t),
	}
	dir := t.TempDir()
	// JSON object order is config order: write it by hand to fix it.
	cfg := `{"servers": {"a": ` + mustJSON(t, servers["a"]) + `, "a_b": ` + mustJSON(t, servers["a_b"]) + `}}`
	h := routertest.NewWithConfig(t, dir, testutil.WriteFile(t, dir, "mcp.config.json", cfg), legacy)
	cs := h.Connect(nil)
	h.Booted()
	res := routertest.Call(t, cs, "a_b_echo", map[string]any{"message": "who"})
	if routertest.Text(res) != "Alias: who" {
		t.Errorf("a_b_echo should be a's alias (first in config order), got %q", routertest.Text(res))
	}
	log := h.Stderr.String()
	for _, want := range []string{
		"[EVOKORE] Skipping duplicate proxied tool 'a_b_echo' from server 'a_b' (already registered).",
		`Duplicate collision summary: {"serverId":"a_b","skippedDuplicates":1,"policy":"first_registration_wins"}`,
		"(1 duplicate(s) skipped)",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
}

func TestUnsetPlaceholderFailsOnlyThatServer(t *testing.T) {
	broken := routertest.Fixture(t)
	broken["env"] = map[string]any{"TOKEN": "${EVOKORE_TEST_UNSET_A}", "OTHER": "${EVOKORE_TEST_UNSET_B}"}
	h := routertest.New(t, map[string]any{"broken": broken, "ok": routertest.Fixture(t)}, legacy)
	cs := h.Connect(nil)
	h.Booted()
	st := routertest.Status(t, cs)
	for _, s := range st.Servers {
		switch s.ID {
		case "broken":
			want := "Unresolved env placeholder(s) for child server 'broken' key 'OTHER': ${EVOKORE_TEST_UNSET_B}"
			if s.Status != "error" || s.LastError != want {
				t.Errorf("broken = %+v, want error %q", s, want)
			}
		case "ok":
			if s.Status != "connected" {
				t.Errorf("ok = %+v", s)
			}
		}
	}
	if !strings.Contains(h.Stderr.String(), "Failed to boot child server 'broken': Unresolved env placeholder(s)") {
		t.Errorf("stderr:\n%s", h.Stderr.String())
	}
	if res := routertest.Call(t, cs, "ok_echo", map[string]any{"message": "x"}); res.IsError {
		t.Errorf("ok_echo failed: %v", routertest.Text(res))
	}
}

func TestSlowChildDoesNotHoldUpOthers(t *testing.T) {
	h := routertest.New(t, map[string]any{
		"slowboot": routertest.Fixture(t, "-start-delay", "3s"),
		"fast":     routertest.Fixture(t),
	}, map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy", "EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "700"})
	cs := h.Connect(nil)
	// The handshake is done while slowboot has not answered anything.
	if s := routertest.StatusOf(t, cs, "slowboot"); s != "booting" {
		t.Fatalf("slowboot status right after initialize = %s", s)
	}
	routertest.WaitFor(t, "fast to connect", func() bool { return routertest.StatusOf(t, cs, "fast") == "connected" })
	if res := routertest.Call(t, cs, "fast_echo", map[string]any{"message": "quick"}); res.IsError {
		t.Errorf("fast_echo: %s", routertest.Text(res))
	}
	h.Booted()
	st := routertest.Status(t, cs)
	for _, s := range st.Servers {
		// The supervisor may already be booting it again after the
		// failure: error or booting, never connected.
		if s.ID == "slowboot" && (s.Status == "connected" || s.LastError != "Timed out connecting to child server 'slowboot' after 700ms") {
			t.Errorf("slowboot = %+v", s)
		}
	}
}

func TestPerCallTimeout(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, map[string]string{"EVOKORE_PROXY_REQUEST_TIMEOUT_MS": "300"})
	cs := h.Connect(nil)
	h.Booted()
	res := routertest.Call(t, cs, "fx_slow", map[string]any{"ms": 5000})
	if !res.IsError || routertest.Text(res) != "Proxied tool 'slow' on server 'fx' timed out after 300ms" {
		t.Errorf("result = %+v %q", res.IsError, routertest.Text(res))
	}
	// The child is still healthy.
	if res := routertest.Call(t, cs, "fx_echo", map[string]any{"message": "after"}); res.IsError {
		t.Errorf("fx_echo after timeout: %s", routertest.Text(res))
	}
}

func TestChildKilledMidCallRestarts(t *testing.T) {
	h := routertest.New(t, map[string]any{"victim": routertest.Fixture(t), "bystander": routertest.Fixture(t)}, nil)
	cs := h.Connect(nil)
	h.Booted()
	pid, err := strconv.Atoi(routertest.Text(routertest.Call(t, cs, "victim_pid", map[string]any{})))
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "victim_slow", Arguments: map[string]any{"ms": 60000}})
		done <- outcome{res, err}
	}()
	routertest.WaitFor(t, "the call to reach the child", func() bool { return h.Server.OpenCalls("victim") == 1 })
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-done:
		if o.err != nil || !o.res.IsError || !strings.Contains(routertest.Text(o.res), "stopped while running 'slow'") {
			t.Errorf("call during the kill: %v %+v %q", o.err, o.res, routertest.Text(o.res))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end when its child died")
	}
	// Other children are unaffected.
	if res := routertest.Call(t, cs, "bystander_echo", map[string]any{"message": "still here"}); res.IsError {
		t.Errorf("bystander_echo: %s", routertest.Text(res))
	}
	routertest.WaitFor(t, "victim to restart", func() bool { return routertest.StatusOf(t, cs, "victim") == "connected" })
	res := routertest.Call(t, cs, "victim_echo", map[string]any{"message": "back"})
	if res.IsError || routertest.Text(res) != "Echo: back" {
		t.Errorf("victim_echo after restart: %s", routertest.Text(res))
	}
	newPid, _ := strconv.Atoi(routertest.Text(routertest.Call(t, cs, "victim_pid", map[string]any{})))
	if newPid == pid || newPid == 0 {
		t.Errorf("victim should be a new process: old %d new %d", pid, newPid)
	}
}

func TestCrashMidCallLeavesToolsOutUntilBack(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, legacy)
	cs := h.Connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}})
	h.Booted()
	res := routertest.Call(t, cs, "fx_crash", map[string]any{})
	if !res.IsError {
		t.Fatalf("crash call should fail: %+v", res)
	}
	// Restarted with backoff: the tools come back.
	routertest.WaitFor(t, "fx to be noticed down", func() bool { return routertest.StatusOf(t, cs, "fx") != "connected" })
	routertest.WaitFor(t, "fx tools to return", func() bool {
		return slices.Contains(routertest.ToolNames(t, cs), "fx_echo") && routertest.StatusOf(t, cs, "fx") == "connected"
	})
	if res := routertest.Call(t, cs, "fx_echo", map[string]any{"message": "again"}); res.IsError {
		t.Errorf("fx_echo: %s", routertest.Text(res))
	}
}

func TestChildListChangedReachesClient(t *testing.T) {
	// A tool added later is held for review by default (see pins_test.go);
	// this server trusts its new tools, so the change shows at once.
	fx := routertest.Fixture(t)
	fx["pinNewTools"] = "accept"
	h := routertest.New(t, map[string]any{"fx": fx}, legacy)
	changed := make(chan struct{}, 16)
	cs := h.Connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	h.Booted()
	drain(changed)
	routertest.Call(t, cs, "fx_add_tool", map[string]any{"name": "brand_new"})
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed after the child added a tool")
	}
	routertest.WaitFor(t, "fx_brand_new to be listed", func() bool { return slices.Contains(routertest.ToolNames(t, cs), "fx_brand_new") })
	if got := routertest.Text(routertest.Call(t, cs, "fx_brand_new", map[string]any{})); got != "I am brand_new" {
		t.Errorf("fx_brand_new = %q", got)
	}
}

func TestProgressPassesThrough(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	cs := h.Connect(&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		got = append(got, req.Params)
		mu.Unlock()
	}})
	h.Booted()
	params := &mcp.CallToolParams{Name: "fx_progress", Arguments: map[string]any{"steps": 3}}
	params.SetProgressToken("client-token-7")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("fx_progress: %v %v", err, res)
	}
	routertest.WaitFor(t, "3 progress notifications", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 3 })
	mu.Lock()
	defer mu.Unlock()
	for i, p := range got {
		if p.ProgressToken != "client-token-7" || p.Progress != float64(i+1) || p.Total != 3 {
			t.Errorf("notification %d = %+v", i, p)
		}
	}
}

func TestSamplingForwardedToClient(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	cs := h.Connect(&mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		prompt := req.Params.Messages[0].Content.(*mcp.TextContent).Text
		return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "reply to " + prompt}}, nil
	}})
	h.Booted()
	res := routertest.Call(t, cs, "fx_sample", map[string]any{"prompt": "haiku"})
	if res.IsError || routertest.Text(res) != "sampled: reply to haiku" {
		t.Errorf("fx_sample = %q", routertest.Text(res))
	}
}

func TestSamplingRefusedWhenClientCannot(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	cs := h.Connect(nil)
	h.Booted()
	res := routertest.Call(t, cs, "fx_sample", map[string]any{"prompt": "haiku"})
	if !res.IsError || !strings.Contains(routertest.Text(res), "sampling failed") {
		t.Errorf("fx_sample without client sampling = %q", routertest.Text(res))
	}
}

func TestRootsForwardedToClient(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	c := mcp.NewClient(&mcp.Implementation{Name: "roots-client", Version: "1"}, nil)
	c.AddRoots(&mcp.Root{URI: "file:///home/dev/project", Name: "project"})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := h.Server.Connect(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	h.Booted()
	if got := routertest.Text(routertest.Call(t, cs, "fx_roots", map[string]any{})); got != "roots: file:///home/dev/project" {
		t.Errorf("fx_roots = %q", got)
	}
}

func TestUntypedChildSchemaIsNormalised(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, legacy)
	cs := h.Connect(nil)
	h.Booted()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name == "fx_untyped" {
			m, _ := tl.InputSchema.(map[string]any)
			if m["type"] != "object" {
				t.Errorf("fx_untyped schema = %v", tl.InputSchema)
			}
		}
	}
	if got := routertest.Text(routertest.Call(t, cs, "fx_untyped", map[string]any{})); got != "untyped ok" {
		t.Errorf("fx_untyped = %q", got)
	}
}

func TestBrokenConfigKeepsNativesServing(t *testing.T) {
	dir := t.TempDir()
	path := testutil.WriteFile(t, dir, "mcp.config.json", "{\"servers\": {\n  \"fx\": {\"command\": \"x\",}\n}}")
	h := routertest.NewWithConfig(t, dir, path, nil)
	cs := h.Connect(nil)
	if !slices.Contains(routertest.ToolNames(t, cs), "describe_tool") {
		t.Error("natives should be listed")
	}
	if res := routertest.Call(t, cs, "proxy_server_status", map[string]any{}); res.IsError {
		t.Errorf("proxy_server_status: %s", routertest.Text(res))
	}
	if log := h.Stderr.String(); !strings.Contains(log, "Failed to load mcp.config.json") || !strings.Contains(log, "mcp.config.json:2:") {
		t.Errorf("stderr should report the positioned error:\n%s", log)
	}
}

func TestManifestCacheListsKnownToolsBeforeBoot(t *testing.T) {
	dir := t.TempDir()
	cfgPath := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"fx": routertest.Fixture(t, "-start-delay", "400ms")}})
	first := routertest.NewWithConfig(t, dir, cfgPath, legacy)
	cs := first.Connect(nil)
	first.Booted()
	cs.Close()
	first.Server.Close()

	second := routertest.NewWithConfig(t, dir, cfgPath, legacy)
	cs2 := second.Connect(nil)
	if !slices.Contains(routertest.ToolNames(t, cs2), "fx_echo") {
		t.Fatal("a cached child's tools should be listed before it boots")
	}
	if s := routertest.StatusOf(t, cs2, "fx"); s != "booting" {
		t.Fatalf("fx should still be booting, is %s", s)
	}
	// The call waits for the boot instead of failing.
	res := routertest.Call(t, cs2, "fx_echo", map[string]any{"message": "waited"})
	if res.IsError || routertest.Text(res) != "Echo: waited" {
		t.Errorf("fx_echo during boot = %q", routertest.Text(res))
	}
}

func TestSessionsAreIndependent(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, legacy)
	a := h.Connect(nil)
	b := h.Connect(nil)
	h.Booted()
	if got := routertest.Text(routertest.Call(t, a, "fx_echo", map[string]any{"message": "a"})); got != "Echo: a" {
		t.Errorf("a: %q", got)
	}
	a.Close()
	routertest.WaitFor(t, "a's session to end", func() bool { return len(h.Server.Sessions()) == 1 })
	if got := routertest.Text(routertest.Call(t, b, "fx_echo", map[string]any{"message": "b"})); got != "Echo: b" {
		t.Errorf("b after a closed: %q", got)
	}
	if ids := h.Server.Sessions(); len(ids) != 1 || !strings.HasPrefix(ids[0].ID, "stdio-") {
		t.Errorf("sessions = %v", ids)
	}
}

func drain(ch chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := jsonMarshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCancellationReachesTheChild(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	cs := h.Connect(nil)
	h.Booted()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx_slow", Arguments: map[string]any{"ms": 20000}}); err == nil {
		t.Fatal("the cancelled call should fail")
	}
	routertest.WaitFor(t, "the child to see the cancellation", func() bool {
		return routertest.Text(routertest.Call(t, cs, "fx_read_cancelled", map[string]any{})) == "cancelled: 1"
	})
}

func TestChildLogMessagesReachTheClient(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	got := make(chan string, 4)
	cs := h.Connect(&mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
		got <- fmt.Sprintf("%s %s %v", req.Params.Level, req.Params.Logger, req.Params.Data)
	}})
	h.Booted()
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	routertest.Call(t, cs, "fx_log", map[string]any{"message": "from the child"})
	select {
	case m := <-got:
		if m != "info fx from the child" {
			t.Errorf("log message = %q", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no log message reached the client")
	}
}

func TestElicitationForwardedToClient(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	cs := h.Connect(&mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes to " + req.Params.Message}}, nil
	}})
	h.Booted()
	if got := routertest.Text(routertest.Call(t, cs, "fx_elicit", map[string]any{"message": "deploy?"})); got != "accept: yes to The 'fx' server asks: deploy?" {
		t.Errorf("fx_elicit = %q", got)
	}
}

func TestStreamableHTTPChildWithHeaders(t *testing.T) {
	addr := freeAddr(t)
	child := exec.Command(testutil.FixtureServer(t), "-http", addr)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	h := routertest.New(t, map[string]any{"remote": map[string]any{
		"transport": "http",
		"url":       "http://" + addr + "/",
		"headers":   map[string]any{"X-Evokore-Test": "${EVOKORE_TEST_HEADER}"},
	}}, map[string]string{"EVOKORE_TEST_HEADER": "from-config", "EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "10000"})
	cs := h.Connect(nil)
	routertest.WaitFor(t, "the HTTP child to connect", func() bool { return routertest.StatusOf(t, cs, "remote") == "connected" })
	if got := routertest.Text(routertest.Call(t, cs, "remote_echo", map[string]any{"message": "over http"})); got != "Echo: over http" {
		t.Errorf("remote_echo = %q", got)
	}
	if got := routertest.Text(routertest.Call(t, cs, "remote_header", map[string]any{"name": "X-Evokore-Test"})); got != "X-Evokore-Test: from-config" {
		t.Errorf("remote_header = %q", got)
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestDisabledServerIsNeitherBootedNorResolved(t *testing.T) {
	off := routertest.Fixture(t)
	off["disabled"] = true
	off["env"] = map[string]any{"TOKEN": "${EVOKORE_TEST_NEVER_SET}"}
	h := routertest.New(t, map[string]any{"off": off, "on": routertest.Fixture(t)}, legacy)
	cs := h.Connect(nil)
	h.Booted()
	if s := routertest.StatusOf(t, cs, "off"); s != "disabled" {
		t.Errorf("off is %s", s)
	}
	for _, n := range routertest.ToolNames(t, cs) {
		if strings.HasPrefix(n, "off_") {
			t.Errorf("a disabled server's tool is listed: %s", n)
		}
	}
	if strings.Contains(h.Stderr.String(), "EVOKORE_TEST_NEVER_SET") {
		t.Errorf("a disabled server's placeholders are never resolved:\n%s", h.Stderr.String())
	}
}
