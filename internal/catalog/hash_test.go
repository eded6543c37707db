package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefinitionHash writes the canonical definition in one pass; it must
// agree with Definition.Hash (the canonicalising path pins and approvals
// were recorded with) on every real tool definition we have: the 433
// tools of the retrieval corpus, captured byte for byte from real
// servers, the natives, and definitions with the awkward parts (escapes,
// HTML characters, numbers written oddly, empty and absent fields).
func TestDefinitionHashMatchesTheCanonicalPath(t *testing.T) {
	var tools []*mcp.Tool
	dir := filepath.Join("testdata", "retrieval")
	var corpus struct {
		Servers []struct {
			Tools []*mcp.Tool `json:"tools"`
		} `json:"servers"`
	}
	var natives struct {
		Tools []*mcp.Tool `json:"tools"`
	}
	for name, v := range map[string]any{"corpus.json": &corpus, "natives.json": &natives} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, s := range corpus.Servers {
		tools = append(tools, s.Tools...)
	}
	tools = append(tools, natives.Tools...)
	yes := true
	tools = append(tools,
		&mcp.Tool{Name: ""},
		&mcp.Tool{Name: "x", Title: "<b>&</b> \u2028 \"q\" \\", Description: "tab\there\nnewline é 😀"},
		&mcp.Tool{Name: "n", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"maximum":1.0e2,"default":-0.50}},"z":[3,1E0]}`)},
		&mcp.Tool{Name: "o", InputSchema: map[string]any{"type": "object"}, OutputSchema: json.RawMessage(`null`), Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
	)
	if len(tools) < 400 {
		t.Fatalf("only %d tools loaded", len(tools))
	}
	for _, tool := range tools {
		if got, want := DefinitionHash(tool), DefinitionOf(tool).Hash(); got != want {
			t.Errorf("%q: one-pass hash %s, canonical path %s", tool.Name, got, want)
		}
	}
}
