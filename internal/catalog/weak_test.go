package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An answer is weak when a tool not yet in the catalog could beat it:
// the natives' answer to "read a file" matches read only through
// expansions (get, fetch), while a child's read_file has every word; an
// exact name or a name prefix is never weak, nor is a tool with every
// word of the query as written. discover_tools waits for booting
// children on a weak answer.
func TestFoundIsWeakWhenNoMatchHasTheWholeQuery(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "retrieval", "natives.json"))
	if err != nil {
		t.Fatal(err)
	}
	var natives struct {
		Tools []*mcp.Tool `json:"tools"`
	}
	if err := json.Unmarshal(raw, &natives); err != nil {
		t.Fatal(err)
	}
	var nat []*Entry
	for _, tool := range natives.Tools {
		nat = append(nat, NewEntry(tool, SourceNative))
	}
	store := NewStore(nat, []string{"fs"})
	before := store.Snapshot()
	obj := map[string]any{"type": "object"}
	store.SetServerTools("fs", []*mcp.Tool{{Name: "read_file", Description: "Read the contents of a file from disk.", InputSchema: obj}})
	after := store.Snapshot()

	for _, tc := range []struct {
		snap  *Snapshot
		query string
		weak  bool
	}{
		{before, "read a file", true},
		{before, "zzqx unheard", true}, // nothing matched
		{before, "describe_tool", false},
		{before, "describe tool", false},
		{before, "discover", false}, // a name prefix
		{after, "read a file", false},
	} {
		found := tc.snap.Find(tc.query, 8)
		if found.Weak() != tc.weak {
			t.Errorf("%q (%d tools): weak %v, want %v; matches %+v", tc.query, len(tc.snap.Entries), found.Weak(), tc.weak, found.Matches)
		}
	}
}
