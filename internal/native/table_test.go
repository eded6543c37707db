package native

import (
	"context"
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
