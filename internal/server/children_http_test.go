package server_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// Over streamable HTTP a child's resource update reaches the subscribed
// session only, and its prompts and templates are served as over stdio.
func TestChildContentOverHTTP(t *testing.T) {
	h := routertest.New(t, map[string]any{"notes": contentChild(t, nil)}, nil)
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)
	connect := func(n *notices) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "http", Version: "1"}, n.options())
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	var na, nb notices
	a, b := connect(&na), connect(&nb)
	h.Booted()
	routertest.WaitFor(t, "notes_greet listed", func() bool { return slices.Contains(promptNames(t, b), "notes_greet") })
	if got := promptText(t, b, "notes_greet", map[string]string{"name": "Barbara"}); got != "Hello, Barbara!" {
		t.Errorf("notes_greet = %q", got)
	}
	if err := a.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "note://counter"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "note://static"}); err != nil {
		t.Fatal(err)
	}
	routertest.Call(t, b, "notes_bump", nil)
	routertest.WaitFor(t, "the update at the subscriber", func() bool { return len(na.updates()) > 0 })
	// B's own subscription is then exercised, so B's stream is known to
	// carry updates; the counter update never reached it.
	if err := b.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "note://counter"}); err != nil {
		t.Fatal(err)
	}
	routertest.Call(t, b, "notes_bump", nil)
	routertest.WaitFor(t, "the update at the second subscriber", func() bool { return len(nb.updates()) > 0 })
	if got := nb.updates(); !slices.Equal(got, []string{"note://counter"}) {
		t.Errorf("B got %v, want only the update after it subscribed", got)
	}
	if got := complete(t, a, &mcp.CompleteReference{Type: "ref/resource", URI: "note://items/{id}"}, "id", "2"); !slices.Equal(got, []string{"2"}) {
		t.Errorf("template completion = %v", got)
	}
}
