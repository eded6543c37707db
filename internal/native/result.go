package native

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Text is a successful result holding one text block.
func Text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// Errorf is an isError result holding one text block: a failure the model
// can read and act on.
func Errorf(format string, args ...any) *mcp.CallToolResult {
	r := Text(format, args...)
	r.IsError = true
	return r
}

// MissingArgument is the isError result for a required argument given
// empty, in EVOKORE-MCP's words.
func MissingArgument(name string) *mcp.CallToolResult {
	return Errorf("Missing required argument: %s", name)
}

// JSON is a successful result holding v as indented JSON text.
func JSON(v any) *mcp.CallToolResult {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return Errorf("cannot encode result: %v", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// Decode unmarshals a call's arguments into v after filling in the
// defaults the tool's schema declares for absent top-level properties.
func (c *Call) Decode(v any) error {
	args := map[string]any{}
	if len(c.Args) > 0 && string(c.Args) != "null" {
		if err := json.Unmarshal(c.Args, &args); err != nil {
			return err
		}
	}
	for name, def := range schemaDefaults(c.Spec) {
		if _, set := args[name]; !set {
			args[name] = def
		}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

var (
	defaultsOnce [NumTools]sync.Once
	defaults     [NumTools]map[string]any
)

// schemaDefaults returns the default values a spec's top-level properties
// declare, parsed once per tool.
func schemaDefaults(s Spec) map[string]any {
	defaultsOnce[s.ID].Do(func() {
		var schema struct {
			Properties map[string]struct {
				Default any `json:"default"`
			} `json:"properties"`
		}
		_ = json.Unmarshal([]byte(s.InputSchema), &schema)
		m := map[string]any{}
		for name, p := range schema.Properties {
			if p.Default != nil {
				m[name] = p.Default
			}
		}
		defaults[s.ID] = m
	})
	return defaults[s.ID]
}
