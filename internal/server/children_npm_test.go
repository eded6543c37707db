package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// The npm reference server-everything's own prompts and resources come
// through the router: every prompt under its prefix, a prompt without
// required arguments rendered, and its first resource read back with the
// contents the server gives it.
func TestNPMEverythingPromptsAndResources(t *testing.T) {
	if testing.Short() {
		t.Skip("npm reference servers: not in -short")
	}
	h := routertest.New(t, map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{testutil.NPMServer(t, "server-everything"), "stdio"}},
	}, nil)
	cs := h.Connect(nil)
	h.Booted()
	ctx := context.Background()

	var plain string
	n := 0
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(p.Name, "everything_") {
			continue
		}
		n++
		required := false
		for _, a := range p.Arguments {
			required = required || a.Required
		}
		if !required && plain == "" {
			plain = p.Name
		}
	}
	if n == 0 || plain == "" {
		t.Fatalf("server-everything's prompts: %d listed, one without required arguments: %q", n, plain)
	}
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: plain})
	if err != nil || len(got.Messages) == 0 {
		t.Fatalf("%s: %v %+v", plain, err, got)
	}

	var first *mcp.Resource
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.URI, "evokore://") && !strings.HasPrefix(r.URI, "skill://") {
			first = r
			break
		}
	}
	if first == nil {
		t.Fatal("no resource of server-everything listed")
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: first.URI})
	if err != nil || len(res.Contents) == 0 || res.Contents[0].URI != first.URI {
		t.Fatalf("read %s: %v %+v", first.URI, err, res)
	}
}
