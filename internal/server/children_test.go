package server_test

import (
	"context"
	"net"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// notices records what the router announces to one client session.
type notices struct {
	mu       sync.Mutex
	updated  []string
	prompts  int
	resource int
}

func (n *notices) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			n.mu.Lock()
			n.updated = append(n.updated, req.Params.URI)
			n.mu.Unlock()
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			n.mu.Lock()
			n.prompts++
			n.mu.Unlock()
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			n.mu.Lock()
			n.resource++
			n.mu.Unlock()
		},
	}
}

func (n *notices) updates() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.updated)
}

func contentChild(t *testing.T, extra map[string]any) map[string]any {
	m := map[string]any{"command": testutil.ContentServer(t), "args": []string{}}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func promptNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var out []string
	for p, err := range cs.Prompts(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Name)
	}
	return out
}

func resourceURIs(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var out []string
	for r, err := range cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.URI)
	}
	return out
}

func readText(t *testing.T, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	return res.Contents[0].Text
}

func promptText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]string) string {
	t.Helper()
	res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return res.Messages[0].Content.(*mcp.TextContent).Text
}

func complete(t *testing.T, cs *mcp.ClientSession, ref *mcp.CompleteReference, arg, value string) []string {
	t.Helper()
	res, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
	if err != nil {
		t.Fatalf("complete %+v: %v", ref, err)
	}
	return res.Completion.Values
}

// A child's prompts are listed under its prefix and rendered by the
// child; its resources and templates keep their URIs and are read from
// it; completions reach it for both; the router's own prompts and
// resources are still there.
func TestChildPromptsResourcesAndCompletionsThroughTheRouter(t *testing.T) {
	h := routertest.New(t, map[string]any{"notes": contentChild(t, nil)}, nil)
	cs := h.Connect(nil)
	h.Booted()

	prompts := promptNames(t, cs)
	for _, want := range []string{"resolve-workflow", "notes_greet", "notes_plain"} {
		if !slices.Contains(prompts, want) {
			t.Errorf("prompts/list lacks %s: %v", want, prompts)
		}
	}
	if got := promptText(t, cs, "notes_greet", map[string]string{"name": "Ada", "style": "loud"}); got != "HELLO, ADA!" {
		t.Errorf("notes_greet = %q", got)
	}
	if _, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "greet"}); err == nil {
		t.Error("the child's unprefixed name must not be served")
	}

	uris := resourceURIs(t, cs)
	for _, want := range []string{"evokore://server/status", "note://static", "note://counter"} {
		if !slices.Contains(uris, want) {
			t.Errorf("resources/list lacks %s: %v", want, uris)
		}
	}
	var templates []string
	for tm, err := range cs.ResourceTemplates(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, tm.URITemplate)
	}
	if !slices.Contains(templates, "note://items/{id}") {
		t.Errorf("templates: %v", templates)
	}
	if got := readText(t, cs, "note://static"); got != "static note" {
		t.Errorf("note://static = %q", got)
	}
	if got := readText(t, cs, "note://items/7"); got != "item 7" {
		t.Errorf("note://items/7 = %q", got)
	}
	if got := readText(t, cs, "evokore://server/status"); !strings.Contains(got, `"notes"`) {
		t.Errorf("the router's own resource: %q", got)
	}

	if got := complete(t, cs, &mcp.CompleteReference{Type: "ref/prompt", Name: "notes_greet"}, "name", "A"); !slices.Equal(got, []string{"Ada", "Alan"}) {
		t.Errorf("prompt completion = %v", got)
	}
	if got := complete(t, cs, &mcp.CompleteReference{Type: "ref/resource", URI: "note://items/{id}"}, "id", "1"); !slices.Equal(got, []string{"1", "10"}) {
		t.Errorf("template completion = %v", got)
	}
	if got := complete(t, cs, &mcp.CompleteReference{Type: "ref/prompt", Name: "resolve-workflow"}, "objective", "x"); len(got) != 0 {
		t.Errorf("native prompt completion = %v", got)
	}
}

// A resource update reaches the sessions subscribed to that URI only, and
// the child stays subscribed while any session is.
func TestChildResourceSubscriptionsReachOnlyTheSubscriber(t *testing.T) {
	h := routertest.New(t, map[string]any{"notes": contentChild(t, nil)}, nil)
	var na, nb notices
	a := h.Connect(na.options())
	b := h.Connect(nb.options())
	h.Booted()
	ctx := context.Background()

	if err := a.Subscribe(ctx, &mcp.SubscribeParams{URI: "note://counter"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Subscribe(ctx, &mcp.SubscribeParams{URI: "note://static"}); err != nil {
		t.Fatal(err)
	}
	if got := routertest.Text(routertest.Call(t, a, "notes_subscribers", nil)); got != "note://counter,note://static" {
		t.Errorf("child subscriptions = %q", got)
	}
	routertest.Call(t, a, "notes_bump", nil)
	routertest.WaitFor(t, "the update at the subscriber", func() bool { return len(na.updates()) > 0 })
	if got := na.updates(); !slices.Equal(got, []string{"note://counter"}) {
		t.Errorf("subscriber got %v", got)
	}

	// A unsubscribes, B subscribes: the next update goes to B alone.
	if err := a.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "note://counter"}); err != nil {
		t.Fatal(err)
	}
	if got := routertest.Text(routertest.Call(t, a, "notes_subscribers", nil)); got != "note://static" {
		t.Errorf("after the last unsubscribe the child holds %q", got)
	}
	if err := b.Subscribe(ctx, &mcp.SubscribeParams{URI: "note://counter"}); err != nil {
		t.Fatal(err)
	}
	routertest.Call(t, b, "notes_bump", nil)
	routertest.WaitFor(t, "the update at the new subscriber", func() bool { return len(nb.updates()) > 0 })
	if got := nb.updates(); !slices.Equal(got, []string{"note://counter"}) {
		t.Errorf("second subscriber got %v (the first update was not theirs)", got)
	}
	if got := readText(t, b, "note://counter"); got != "count 2" {
		t.Errorf("counter = %q", got)
	}
	if got := na.updates(); len(got) != 1 {
		t.Errorf("the unsubscribed session got %v", got)
	}

	// A session that leaves drops its subscriptions at the child.
	_ = b.Close()
	routertest.WaitFor(t, "the child unsubscribed", func() bool {
		return routertest.Text(routertest.Call(t, a, "notes_subscribers", nil)) == ""
	})
}

// A child's prompts/resources list_changed reaches the sessions, with the
// new items listed.
func TestChildListChangedReachesSessions(t *testing.T) {
	h := routertest.New(t, map[string]any{"notes": contentChild(t, nil)}, nil)
	var n notices
	cs := h.Connect(n.options())
	h.Booted()
	routertest.WaitFor(t, "the first prompt announcement", func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.prompts > 0
	})

	routertest.Call(t, cs, "notes_add_prompt", map[string]any{"name": "extra"})
	routertest.WaitFor(t, "notes_extra listed", func() bool { return slices.Contains(promptNames(t, cs), "notes_extra") })
	n.mu.Lock()
	before := n.prompts
	n.mu.Unlock()
	routertest.Call(t, cs, "notes_add_prompt", map[string]any{"name": "more"})
	routertest.WaitFor(t, "prompts/list_changed", func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.prompts > before
	})
	// The announcement may be of an earlier step; the listing settles.
	routertest.WaitFor(t, "notes_more listed", func() bool { return slices.Contains(promptNames(t, cs), "notes_more") })
	if got := promptText(t, cs, "notes_more", nil); got != "added more" {
		t.Errorf("notes_more = %q", got)
	}

	n.mu.Lock()
	beforeRes := n.resource
	n.mu.Unlock()
	routertest.Call(t, cs, "notes_add_resource", map[string]any{"uri": "note://extra"})
	routertest.WaitFor(t, "resources/list_changed", func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.resource > beforeRes
	})
	routertest.WaitFor(t, "note://extra listed", func() bool { return slices.Contains(resourceURIs(t, cs), "note://extra") })
	if got := readText(t, cs, "note://extra"); got != "added note://extra" {
		t.Errorf("note://extra = %q", got)
	}
}

// prefix "" passes a child's tool and prompt names through unchanged; a
// prefix of one's own replaces the server id.
func TestPrefixOption(t *testing.T) {
	h := routertest.New(t, map[string]any{
		"notes": contentChild(t, map[string]any{"prefix": ""}),
		"other": contentChild(t, map[string]any{"prefix": "n2"}),
	}, nil)
	cs := h.Connect(nil)
	h.Booted()
	prompts := promptNames(t, cs)
	for _, want := range []string{"greet", "plain", "n2_greet"} {
		if !slices.Contains(prompts, want) {
			t.Errorf("prompts lack %s: %v", want, prompts)
		}
	}
	if slices.Contains(prompts, "notes_greet") || slices.Contains(prompts, "other_greet") {
		t.Errorf("server ids used despite the prefix: %v", prompts)
	}
	if got := routertest.Text(routertest.Call(t, cs, "bump", nil)); got != "count 1" {
		t.Errorf("bump = %q", got)
	}
	if got := routertest.Text(routertest.Call(t, cs, "n2_bump", nil)); got != "count 1" {
		t.Errorf("n2_bump = %q (the second child's own counter)", got)
	}
	if got := promptText(t, cs, "greet", map[string]string{"name": "Grace"}); got != "Hello, Grace!" {
		t.Errorf("greet = %q", got)
	}
	if got := complete(t, cs, &mcp.CompleteReference{Type: "ref/prompt", Name: "n2_greet"}, "name", "G"); !slices.Equal(got, []string{"Grace"}) {
		t.Errorf("n2_greet completion = %v", got)
	}
}

// A child's prompts follow the permission rule of their listed name, and
// its resources are served only while the session may call one of the
// server's tools.
func TestChildContentFollowsPermissions(t *testing.T) {
	dir := t.TempDir()
	// Every tool denied by the role's default; one prompt allowed by name.
	testutil.WriteFile(t, dir, "permissions.yml", "roles:\n  reader:\n    default_permission: deny\n    overrides:\n      locked_plain: allow\nactive_role: reader\n")
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"locked": contentChild(t, nil)}})
	h := routertest.NewWithConfig(t, dir, cfg, nil)
	cs := h.Connect(nil)
	h.Booted()
	routertest.WaitFor(t, "locked_plain listed", func() bool { return slices.Contains(promptNames(t, cs), "locked_plain") })
	if prompts := promptNames(t, cs); slices.Contains(prompts, "locked_greet") {
		t.Errorf("a denied prompt listed: %v", prompts)
	}
	if _, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "locked_greet", Arguments: map[string]string{"name": "x"}}); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("denied prompt: %v", err)
	}
	if got := promptText(t, cs, "locked_plain", nil); got != "a plain prompt" {
		t.Errorf("locked_plain = %q", got)
	}
	// Every tool of the server is denied: its resources are not served.
	if uris := resourceURIs(t, cs); slices.Contains(uris, "note://static") {
		t.Errorf("resources of a server whose tools are all denied: %v", uris)
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "note://static"}); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("read of a denied server's resource: %v", err)
	}
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "note://counter"}); err == nil {
		t.Error("subscribed to a denied server's resource")
	}
}

// A child on the older HTTP+SSE transport ("type": "sse") is proxied:
// its tools, prompts and resources.
func TestSSEChild(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	child := exec.Command(testutil.ContentServer(t), "-sse", addr)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	h := routertest.New(t, map[string]any{
		"legacy": map[string]any{"type": "sse", "url": "http://" + addr + "/"},
		"old":    map[string]any{"transport": "sse", "url": "http://" + addr + "/"},
	}, nil)
	cs := h.Connect(nil)
	// The child may still be starting to listen: wait for the router to
	// reach it (it retries with backoff).
	routertest.WaitFor(t, "the SSE child", func() bool { return strings.HasPrefix(routertest.StatusOf(t, cs, "legacy"), "connected") })
	routertest.WaitFor(t, "the second SSE child", func() bool { return strings.HasPrefix(routertest.StatusOf(t, cs, "old"), "connected") })
	if got := routertest.Text(routertest.Call(t, cs, "legacy_bump", nil)); got != "count 1" {
		t.Errorf("legacy_bump = %q", got)
	}
	if got := routertest.Text(routertest.Call(t, cs, "old_bump", nil)); got != "count 2" {
		t.Errorf("old_bump = %q (same server process)", got)
	}
	routertest.WaitFor(t, "legacy_greet listed", func() bool { return slices.Contains(promptNames(t, cs), "legacy_greet") })
	if got := promptText(t, cs, "legacy_greet", map[string]string{"name": "Alan"}); got != "Hello, Alan!" {
		t.Errorf("legacy_greet = %q", got)
	}
	if got := readText(t, cs, "note://counter"); got != "count 2" {
		t.Errorf("note://counter = %q", got)
	}
}

// A call to an unprefixed name made while a server without a prefix is
// still booting waits for it, as a prefixed name does, instead of
// answering "Unknown tool".
func TestUnprefixedNameWaitsForBoot(t *testing.T) {
	fx := routertest.Fixture(t, "-start-delay", "400ms")
	fx["prefix"] = ""
	h := routertest.New(t, map[string]any{"plain": fx}, nil)
	cs := h.Connect(nil)
	if got := routertest.Text(routertest.Call(t, cs, "echo", map[string]any{"message": "early"})); got != "Echo: early" {
		t.Errorf("echo while booting = %q", got)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	if err == nil && !res.IsError {
		t.Errorf("an unknown name once the server is up: %+v", res)
	}
}
