package catalog_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/evokore/evokore/internal/native"
)

// The retrieval benchmark ranks natives.json, so a natives.json behind the
// generated table measures descriptions the router no longer serves.
// Refresh it with the capture program (see testdata/retrieval/README.md):
//
//	cd internal/catalog/testdata/retrieval/capture && go run . -table ../../../../native/tools_gen.go -out ../natives.json
func TestNativesFixtureMatchesTheGeneratedTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "retrieval", "natives.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fixture struct {
		Tools []struct {
			Name        string          `json:"name"`
			Title       string          `json:"title"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations struct {
				ReadOnly    bool `json:"readOnlyHint"`
				Destructive bool `json:"destructiveHint"`
				Idempotent  bool `json:"idempotentHint"`
				OpenWorld   bool `json:"openWorldHint"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &fixture); err != nil {
		t.Fatal(err)
	}
	specs := native.Specs()
	if len(fixture.Tools) != len(specs) || len(specs) != native.NumTools {
		t.Fatalf("natives.json has %d tools, the table %d", len(fixture.Tools), len(specs))
	}
	// Compared as JSON values: the capture program escapes "<" as \u003c.
	value := func(s []byte) any {
		var v any
		if err := json.Unmarshal(s, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for i, s := range specs {
		f := fixture.Tools[i]
		a := f.Annotations
		if f.Name != s.Name || f.Title != s.Title || f.Description != s.Description ||
			!reflect.DeepEqual(value(f.InputSchema), value([]byte(s.InputSchema))) ||
			a.ReadOnly != s.ReadOnly || a.Destructive != s.Destructive || a.Idempotent != s.Idempotent || a.OpenWorld != s.OpenWorld {
			t.Errorf("natives.json tool %d (%s) is stale against the generated table (%s): regenerate it", i, f.Name, s.Name)
		}
	}
}
