package budget

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
)

func TestCountMatchesPublishedTokenizations(t *testing.T) {
	// Reference token ids: "tiktoken is great!" is 6 tokens in both
	// encodings; "hello world" is 2.
	for _, enc := range []string{Cl100k, O200k} {
		for text, want := range map[string]int{"tiktoken is great!": 6, "hello world": 2} {
			if n, err := Count(enc, text); err != nil || n != want {
				t.Errorf("%s %q = %d, %v; want %d", enc, text, n, err, want)
			}
		}
	}
	if _, err := Count("p50k", "x"); err == nil {
		t.Error("an unknown encoding is an error")
	}
}

func TestMeasureCountsTheListingJSON(t *testing.T) {
	tool := &mcp.Tool{Name: "search_skills", Title: "Search", Description: "Search the skill library.", InputSchema: map[string]any{"type": "object", "properties": map[string]any{}}}
	store := catalog.NewStore([]*catalog.Entry{catalog.NewEntry(tool, catalog.SourceNative)}, nil)
	p := &catalog.Profile{Name: "p", Visibility: catalog.VisibleAllNative, Budget: 5}
	r, err := Measure(p, store.Snapshot(), []string{Cl100k}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tools":[` + string(store.Snapshot().Entries[0].Listing()) + `]}`
	n, _ := Count(Cl100k, want)
	if r.Bytes != len(want) || r.Tokens[Cl100k] != n || r.Count != 1 || !r.OverBudget {
		t.Errorf("report %+v, want %d bytes %d tokens over budget", r, len(want), n)
	}
	r, _ = Measure(p, store.Snapshot(), []string{Cl100k}, 10000)
	if r.OverBudget || r.Budget != 10000 {
		t.Errorf("a command-line budget replaces the profile's: %+v", r)
	}
}
