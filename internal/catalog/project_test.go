package catalog

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func names(es []*Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

// Project: legacy lists everything, a profile lists its tools plus the
// session's activations, in catalog order; a quarantined tool is never
// listed, not even in legacy mode or when activated.
func TestProjectListsProfileActivationsAndNeverAQuarantinedTool(t *testing.T) {
	obj := map[string]any{"type": "object"}
	s := NewStore([]*Entry{NewEntry(&mcp.Tool{Name: "describe_tool", InputSchema: obj}, SourceNative), NewEntry(&mcp.Tool{Name: "search_skills", InputSchema: obj}, SourceNative)}, []string{"fx"})
	s.SetServerTools("fx", []*mcp.Tool{{Name: "echo", InputSchema: obj}, {Name: "held", InputSchema: obj}, {Name: "slow", InputSchema: obj}})
	snap := s.Snapshot()
	held, ok := snap.Lookup("fx_held")
	if !ok {
		t.Fatal("fx_held is not in the catalog")
	}
	held.Quarantine = "quarantined"
	p := &Profile{Name: "tiny", Visibility: VisibleList, Natives: map[string]bool{"describe_tool": true}, Proxied: []string{"fx_slow"}}
	if got := names(snap.Project(p, true, nil)); !slices.Equal(got, []string{"describe_tool", "search_skills", "fx_echo", "fx_slow"}) {
		t.Errorf("legacy: %v", got)
	}
	if got := names(snap.Project(p, false, nil)); !slices.Equal(got, []string{"describe_tool", "fx_slow"}) {
		t.Errorf("profile only: %v", got)
	}
	active := func(name string) bool { return name == "fx_echo" || name == "fx_held" }
	if got := names(snap.Project(p, false, active)); !slices.Equal(got, []string{"describe_tool", "fx_echo", "fx_slow"}) {
		t.Errorf("with activations: %v", got)
	}
}

// Validate lists every violation; a valid call and an uncompilable schema
// pass.
func TestValidateArguments(t *testing.T) {
	e := NewProxyEntry("fx", &mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object",
		"properties": map[string]any{"n": map[string]any{"type": "integer"}, "s": map[string]any{"type": "string"}},
		"required":   []any{"n"}}})
	if v := e.Validate(json.RawMessage(`{"n":1,"s":"x"}`)); v != nil {
		t.Errorf("valid call: %v", v)
	}
	v := e.Validate(json.RawMessage(`{"s":2}`))
	if len(v) != 2 || !strings.Contains(strings.Join(v, "\n"), "'/s'") {
		t.Errorf("two violations (missing n, s not a string): %v", v)
	}
	if v := e.Validate(json.RawMessage(`{"n":`)); len(v) != 1 || !strings.HasPrefix(v[0], "arguments are not valid JSON") {
		t.Errorf("bad JSON: %v", v)
	}
	if v := e.Validate(nil); len(v) != 1 {
		t.Errorf("no arguments for a required field: %v", v)
	}
	odd := NewProxyEntry("fx", &mcp.Tool{Name: "odd", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"$ref": "#/nowhere"}}}})
	if v := odd.Validate(json.RawMessage(`{"x":1}`)); v != nil {
		t.Errorf("an uncompilable schema blocks calls: %v", v)
	}
}
