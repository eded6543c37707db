// Package tsdecl writes compact TypeScript-style declarations of tools from
// their schemas, for a model writing a run_code program (and for
// `evokore profile` to count). It is its own package so that what only
// describes tools never depends on the sandbox that runs programs.
package tsdecl

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Declarations are what a model needs to write a program against tools:
// one TypeScript-style declaration of the tools object, each method typed
// from the tool's input schema and, when it has one, its output schema
// (else it resolves to the content blocks). They are far shorter than
// the JSON schemas: describe_tool returns them with format "typescript",
// and `evokore profile` counts them.
func Declarations(tools []*mcp.Tool) string {
	var b strings.Builder
	b.WriteString("declare const tools: {\n")
	for _, t := range tools {
		if doc := summary(t); doc != "" {
			fmt.Fprintf(&b, "  /** %s */\n", doc)
		}
		out := "Content[]"
		if t.OutputSchema != nil {
			out = typeOf(schemaOf(t.OutputSchema), 0)
		}
		fmt.Fprintf(&b, "  %s(args: %s): Promise<%s>;\n", key(t.Name), typeOf(schemaOf(t.InputSchema), 0), out)
	}
	b.WriteString("  call(name: string, args?: object): Promise<unknown>;\n};\n")
	b.WriteString("type Content = {type: \"text\"; text: string} | {type: string; [k: string]: unknown};\n")
	return b.String()
}

// maxDoc bounds a tool's description in its declaration; maxType bounds
// one type's text, past which a hostile or huge schema is just object.
const (
	maxDoc   = 160
	maxType  = 2000
	maxDepth = 6
)

func summary(t *mcp.Tool) string {
	d := strings.TrimSpace(t.Description)
	if i := strings.IndexByte(d, '\n'); i >= 0 {
		d = d[:i]
	}
	d = strings.ReplaceAll(d, "*/", "* /")
	if len(d) > maxDoc {
		d = strings.ToValidUTF8(d[:maxDoc], "") + "…"
	}
	return d
}

// schema is the part of JSON Schema a declaration reads (UnmarshalJSON
// names the keywords).
type schema struct {
	Type                 any
	Enum                 []any
	Const                any
	Items                *schema
	Properties           map[string]*schema
	Required             []string
	AdditionalProperties json.RawMessage
	AnyOf                []*schema
	OneOf                []*schema
}

// UnmarshalJSON reads what it can of a schema, keyword by keyword: one it
// cannot read (a tuple's items, a boolean subschema, a required that is
// no list) is left out, and types as unknown, instead of leaving the
// whole tool untyped. A schema that is no object reads as empty.
func (s *schema) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	read := func(keyword string, into any) {
		if raw, ok := m[keyword]; ok {
			_ = json.Unmarshal(raw, into)
		}
	}
	read("type", &s.Type)
	read("enum", &s.Enum)
	read("const", &s.Const)
	read("items", &s.Items)
	read("properties", &s.Properties)
	read("required", &s.Required)
	s.AdditionalProperties = m["additionalProperties"]
	read("anyOf", &s.AnyOf)
	read("oneOf", &s.OneOf)
	return nil
}

func schemaOf(v any) *schema {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var s schema
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	return &s
}

func typeOf(s *schema, depth int) string {
	t := rawType(s, depth)
	if len(t) > maxType {
		return "object"
	}
	return t
}

func rawType(s *schema, depth int) string {
	if s == nil || depth > maxDepth {
		return "unknown"
	}
	if s.Const != nil {
		return literal(s.Const)
	}
	if len(s.Enum) > 0 {
		parts := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			parts[i] = literal(v)
		}
		return strings.Join(parts, " | ")
	}
	if alts := append(slices.Clone(s.AnyOf), s.OneOf...); len(alts) > 0 {
		parts := make([]string, len(alts))
		for i, a := range alts {
			parts[i] = typeOf(a, depth+1)
		}
		return strings.Join(parts, " | ")
	}
	switch ts := s.Type.(type) {
	case string:
		return named(ts, s, depth)
	case []any:
		var parts []string
		for _, v := range ts {
			if n, ok := v.(string); ok {
				parts = append(parts, named(n, s, depth))
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, " | ")
		}
	}
	if s.Properties != nil {
		return named("object", s, depth)
	}
	return "unknown"
}

func named(t string, s *schema, depth int) string {
	switch t {
	case "string":
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "array":
		item := typeOf(s.Items, depth+1)
		if strings.ContainsAny(item, "| ") {
			item = "(" + item + ")"
		}
		return item + "[]"
	case "object":
		return objectType(s, depth)
	}
	return "unknown"
}

func objectType(s *schema, depth int) string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	var fields []string
	for _, n := range names {
		opt := "?"
		if slices.Contains(s.Required, n) {
			opt = ""
		}
		fields = append(fields, key(n)+opt+": "+typeOf(s.Properties[n], depth+1))
	}
	if extra := s.AdditionalProperties; len(extra) > 0 && string(extra) != "false" {
		v := "unknown"
		if string(extra) != "true" {
			var es schema
			if json.Unmarshal(extra, &es) == nil {
				v = typeOf(&es, depth+1)
			}
		}
		fields = append(fields, "[k: string]: "+v)
	}
	if len(fields) == 0 {
		return "{}"
	}
	return "{" + strings.Join(fields, "; ") + "}"
}

// key is a property or method name, quoted unless it is an identifier.
func key(n string) string {
	for i, r := range n {
		if r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return literal(n)
	}
	if n == "" {
		return `""`
	}
	return n
}

func literal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "unknown"
	}
	return string(b)
}
