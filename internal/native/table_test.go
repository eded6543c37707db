package native

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
)

// The hashes computed once per process are each tool's definition hash:
// pins and approvals compare them with hashes computed afresh.
func TestEntriesCarryTheirDefinitionHash(t *testing.T) {
	var table Table
	for _, s := range specs {
		table.Bind(s.ID, func(context.Context, *Call) (*mcp.CallToolResult, error) { return nil, nil })
	}
	entries := table.Entries()
	if len(entries) != NumTools {
		t.Fatalf("%d entries, want %d", len(entries), NumTools)
	}
	for _, e := range entries {
		if want := catalog.DefinitionHash(e.Tool); e.Hash != want || e.Source != catalog.SourceNative {
			t.Errorf("%s: hash %s source %s, want %s native", e.Name, e.Hash, e.Source, want)
		}
	}
}

// Every array a native tool takes says what its items are, as EVOKORE-MCP's
// schemas did (describe_tool's tools are strings): a client that builds
// arguments from the schema needs the item type.
func TestArrayArgumentsTypeTheirItems(t *testing.T) {
	for _, s := range Specs() {
		var schema struct {
			Properties map[string]struct {
				Type  any `json:"type"`
				Items *struct {
					Type any `json:"type"`
				} `json:"items"`
			} `json:"properties"`
		}
		if err := json.Unmarshal([]byte(s.InputSchema), &schema); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		for name, p := range schema.Properties {
			if p.Type == "array" && (p.Items == nil || p.Items.Type == nil) {
				t.Errorf("%s.%s is an array without an item type", s.Name, name)
			}
		}
	}
	if s, _ := Lookup("describe_tool"); !strings.Contains(s.InputSchema, `"tools":{"type":"array","description":"tool names","items":{"type":"string"}}`) {
		t.Errorf("describe_tool's schema: %s", s.InputSchema)
	}
}
