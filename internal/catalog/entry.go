package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/evokore/evokore/internal/rawjson"
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
	// Child is a proxied tool's definition as its child listed it (Tool
	// is renamed and its schema normalised): what pins record.
	Child *mcp.Tool
	// Long is "<prefix><tool>" when it is longer than MaxToolName and
	// Name is its ShortName; empty otherwise.
	Long string
	// Hash identifies the Definition as the child declared it; pinning
	// and approvals bind to it.
	Hash string
	// ParamHeaders is set when the tool's input schema annotates
	// arguments with x-mcp-header (MCP 2026-07-28): a request calling it
	// over HTTP must carry them as Mcp-Param-* headers.
	ParamHeaders bool
	// TaskSupport is whether the tool runs as an MCP task: "optional",
	// "required" (only as a task) or "forbidden" (never); "" is not
	// declared, which the router serves as optional without listing it.
	// Natives declare it in evokore.cue, a child's tools in its server's
	// "tasks" in mcp.config.json (the router runs the task, so the child
	// need know nothing of tasks).
	TaskSupport string
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
	return NewHashedEntry(t, src, DefinitionHash(t))
}

// NewHashedEntry is NewEntry for a caller that already holds
// DefinitionHash(t) (the native table computes its hashes once).
func NewHashedEntry(t *mcp.Tool, src Source, hash string) *Entry {
	return &Entry{Name: t.Name, Tool: t, Source: src, Hash: hash}
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
	return newProxyEntry(server, server+"_", t)
}

func newProxyEntry(server, prefix string, t *mcp.Tool) *Entry {
	cp := *t
	cp.Name = prefix + t.Name
	long := ""
	if len(cp.Name) > MaxToolName {
		long, cp.Name = cp.Name, ShortName(cp.Name)
	}
	schema := NormalizeSchema(t.InputSchema)
	props := map[string]any{}
	for k, v := range schema["properties"].(map[string]any) {
		props[k] = v
	}
	props[ApprovalTokenField] = approvalTokenProperty
	schema["properties"] = props
	cp.InputSchema = schema
	return &Entry{Name: cp.Name, Tool: &cp, Source: SourceProxy, Server: server, Original: t.Name, Child: t, Long: long, Hash: DefinitionHash(t),
		ParamHeaders: annotatesHeaders(schema)}
}

// annotatesHeaders reports whether a schema, at any depth, carries an
// x-mcp-header annotation.
func annotatesHeaders(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["x-mcp-header"]; ok {
			return true
		}
		for _, sub := range v {
			if annotatesHeaders(sub) {
				return true
			}
		}
	case []any:
		for _, sub := range v {
			if annotatesHeaders(sub) {
				return true
			}
		}
	}
	return false
}

// MaxToolName is the longest tool name evokore lists: clients reject
// longer ones (Claude Code refuses the whole server over one).
const MaxToolName = 64

// ShortName is the name listed for a tool whose "<prefix><tool>" is longer
// than MaxToolName: its first bytes, cut at a character boundary, then
// "_" and 8 hex digits of the full name's SHA-256. The same full name
// always gets the same short one; two full names sharing their start get
// different ones; and a call to the short name reaches the tool by its
// catalog entry (Entry.Long keeps the full name).
func ShortName(full string) string {
	sum := sha256.Sum256([]byte(full))
	keep := MaxToolName - 9
	for keep > 0 && !utf8.RuneStart(full[keep]) {
		keep--
	}
	return full[:keep] + "_" + hex.EncodeToString(sum[:4])
}

// Definition is everything in a tool's definition that a client or a
// model reads and acts on: a change to any of it can change what a call
// is trusted to do (a flipped readOnlyHint, an injected title). Pinning
// records it and approvals bind its hash, so both see the same changes.
// Schemas and annotations are kept as canonical JSON.
type Definition struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

// DefinitionOf is t's definition as the child (or the native table)
// declared it.
func DefinitionOf(t *mcp.Tool) Definition {
	return Definition{
		Name:         t.Name,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  canonicalOrNil(t.InputSchema),
		OutputSchema: canonicalOrNil(t.OutputSchema),
		Annotations:  canonicalOrNil(t.Annotations),
	}
}

// canonicalOrNil renders v canonically; an absent value (nil, a nil
// pointer, JSON null) is nil so that it hashes like a missing field.
func canonicalOrNil(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	raw, err := CanonicalJSON(v)
	if err != nil || string(raw) == "null" {
		return nil
	}
	return raw
}

// Hash is the sha256 of the definition's canonical JSON.
func (d Definition) Hash() string {
	raw, _ := CanonicalJSON(d)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// DefinitionHash is the hash of t's Definition: the one hash approvals
// and pins compare. It is DefinitionOf(t).Hash(), computed in one pass:
// DefinitionOf's fields are canonical already, so the definition is
// written out canonically instead of marshalled and canonicalised a
// second time (every native and every child tool is hashed at start and
// at each boot; this halves that cost).
func DefinitionHash(t *mcp.Tool) string {
	sum := sha256.Sum256(DefinitionOf(t).appendCanonical(nil))
	return hex.EncodeToString(sum[:])
}

// appendCanonical appends d's canonical JSON, for a d whose raw fields are
// canonical (as DefinitionOf makes them): keys in sorted order, the
// fields json's omitempty would leave out left out, strings escaped as
// canonjson escapes them.
func (d Definition) appendCanonical(b []byte) []byte {
	b = append(b, '{')
	sep := false
	field := func(key string, val []byte) {
		if sep {
			b = append(b, ',')
		}
		sep = true
		b = append(b, '"')
		b = append(b, key...)
		b = append(b, '"', ':')
		b = append(b, val...)
	}
	str := func(s string) []byte {
		raw, _ := json.Marshal(s)
		return raw
	}
	if len(d.Annotations) > 0 {
		field("annotations", d.Annotations)
	}
	if d.Description != "" {
		field("description", str(d.Description))
	}
	if len(d.InputSchema) > 0 {
		field("inputSchema", d.InputSchema)
	}
	field("name", str(d.Name))
	if len(d.OutputSchema) > 0 {
		field("outputSchema", d.OutputSchema)
	}
	if d.Title != "" {
		field("title", str(d.Title))
	}
	return append(b, '}')
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
		// Valid JSON is decoded in place, once; only invalid input goes
		// through the library's decoder, for its error text.
		var v any
		err := rawjson.ErrSyntax
		if json.Valid(args) {
			v, err = rawjson.Decode(args)
		}
		if err != nil {
			v, err = jsonschema.UnmarshalJSON(bytes.NewReader(args))
		}
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
