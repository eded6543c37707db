package native

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Manager names the owner of a group of native tools. Its constants are
// generated from the #Manager enum in schema/tool.cue.
type Manager string

// ToolID indexes the native tool table. Its constants are generated.
type ToolID int

// Spec is one native tool as evokore.cue declares it.
type Spec struct {
	ID          ToolID
	Name        string
	Manager     Manager
	Title       string
	Description string
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
	// InputSchema is the tool's JSON Schema, as JSON.
	InputSchema string
	// TaskSupport is whether the tool runs as an MCP task ("optional",
	// "required", "forbidden"); "" declares nothing.
	TaskSupport string
}

// Specs returns the native tool table in catalog order.
func Specs() []Spec { return specs[:] }

// Lookup returns the spec of the named native tool.
func Lookup(name string) (Spec, bool) {
	id, ok := byName[name]
	if !ok {
		return Spec{}, false
	}
	return specs[id], true
}

// Spec returns the table entry of id.
func (id ToolID) Spec() Spec { return specs[id] }

// String returns the tool's name.
func (id ToolID) String() string { return specs[id].Name }

// Tool renders the spec as the MCP tool definition clients see.
func (s Spec) Tool() *mcp.Tool {
	return &mcp.Tool{
		Name:        s.Name,
		Title:       s.Title,
		Description: s.Description,
		InputSchema: json.RawMessage(s.InputSchema),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    s.ReadOnly,
			DestructiveHint: &s.Destructive,
			IdempotentHint:  s.Idempotent,
			OpenWorldHint:   &s.OpenWorld,
		},
	}
}
