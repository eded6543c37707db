package catalog

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkValidateEcho is argument validation of one small proxied call,
// the pipeline's costliest own stage on the fast path.
func BenchmarkValidateEcho(b *testing.B) {
	e := &Entry{Name: "c_echo", Tool: &mcp.Tool{Name: "echo", InputSchema: map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"message"},
		"properties": map[string]any{"message": map[string]any{"type": "string", "description": "what to echo"}},
	}}}
	args := json.RawMessage(`{"message":"a longer benchmark message"}`)
	if v := e.Validate(args); v != nil {
		b.Fatal(v)
	}
	b.ReportAllocs()
	for b.Loop() {
		if e.Validate(args) != nil {
			b.Fatal("invalid")
		}
	}
}
