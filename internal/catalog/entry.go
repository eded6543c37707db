package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Source says where a tool comes from.
type Source uint8

// Sources.
const (
	SourceNative Source = iota
	SourceProxy
	SourcePlugin
)

// String names the source as discovery output shows it.
func (s Source) String() string {
	switch s {
	case SourceProxy:
		return "proxy"
	case SourcePlugin:
		return "plugin"
	}
	return "native"
}

// Entry is one tool in the catalog. It is immutable once published.
type Entry struct {
	// Name is what clients call: the native name, or `<server>_<tool>`.
	Name string
	// Tool is the definition clients see. Never modify it.
	Tool   *mcp.Tool
	Source Source
	// Server and Original are the child server and the child's own name
	// of a proxied tool.
	Server   string
	Original string
	// Hash identifies the definition (name, description, input schema) as
	// the child declared it; pinning and approval tokens bind to it.
	Hash string
	// Quarantine, when set, explains why the tool is held back: its
	// definition changed since an operator last accepted it. A quarantined
	// tool is never listed or found, and calls get this text.
	Quarantine string

	compile  sync.Once
	schema   *jsonschema.Schema
	schemaEr error

	listings listings
}

// NewEntry builds a native or plugin entry from its definition.
func NewEntry(t *mcp.Tool, src Source) *Entry {
	return &Entry{Name: t.Name, Tool: t, Source: src, Hash: DefinitionHash(t)}
}

// ApprovalTokenField is the argument that carries a human's approval.
// Every proxied tool's schema offers it (never required), so a client can
// retry an intercepted call with it.
const ApprovalTokenField = "_evokore_approval_token"

// approvalTokenProperty is the schema of ApprovalTokenField.
var approvalTokenProperty = map[string]any{
	"type":        "string",
	"description": "Only when evokore asked for human approval: ask the user, and if they agree retry with the token it gave.",
}

// NewProxyEntry builds the entry of a child's tool: renamed
// `<server>_<tool>`, its input schema normalised to an object schema that
// offers the approval token. The child's definition is not modified.
func NewProxyEntry(server string, t *mcp.Tool) *Entry {
	cp := *t
	cp.Name = server + "_" + t.Name
	schema := NormalizeSchema(t.InputSchema)
	props := map[string]any{}
	for k, v := range schema["properties"].(map[string]any) {
		props[k] = v
	}
	props[ApprovalTokenField] = approvalTokenProperty
	schema["properties"] = props
	cp.InputSchema = schema
	return &Entry{Name: cp.Name, Tool: &cp, Source: SourceProxy, Server: server, Original: t.Name, Hash: DefinitionHash(t)}
}

// DefinitionHash is the sha256 of a tool's name, description and input
// schema in canonical JSON.
func DefinitionHash(t *mcp.Tool) string {
	schema, _ := CanonicalJSON(t.InputSchema)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", t.Name, t.Description)
	h.Write(schema)
	return hex.EncodeToString(h.Sum(nil))
}

// NormalizeSchema returns an input schema that MCP clients and the SDK
// accept: always a JSON object with "type":"object". Children send schemas
// without a type, with another type, or none at all; those become an
// object schema that keeps whatever properties were declared.
func NormalizeSchema(schema any) map[string]any {
	var m map[string]any
	switch s := schema.(type) {
	case map[string]any:
		m = s
	case nil:
	default:
		raw, err := json.Marshal(s)
		if err == nil {
			_ = json.Unmarshal(raw, &m)
		}
	}
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	if out["type"] != "object" {
		out["type"] = "object"
	}
	if _, ok := out["properties"].(map[string]any); !ok {
		out["properties"] = map[string]any{}
	}
	return out
}

// Validate checks arguments against the entry's input schema and returns
// one line per violation; nil means valid. A schema that does not compile
// (children send odd ones) validates nothing rather than blocking calls.
func (e *Entry) Validate(args json.RawMessage) []string {
	e.compile.Do(func() { e.schema, e.schemaEr = compileSchema(e.Name, e.Tool.InputSchema) })
	if e.schema == nil {
		return nil
	}
	var inst any = map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
		if err != nil {
			return []string{"arguments are not valid JSON: " + err.Error()}
		}
		inst = v
	}
	err := e.schema.Validate(inst)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []string{err.Error()}
	}
	return violations(ve)
}

func violations(ve *jsonschema.ValidationError) []string {
	var out []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			out = append(out, fmt.Sprintf("at '%s': %s", loc, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}
