package native

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// InvalidArguments is the answer to arguments a tool cannot use, whether
// the input schema refused them (the router's Validate stage) or the
// handler could not decode them: an isError result listing every problem,
// so the model can correct them in one retry. It is never a JSON-RPC
// error: MCP reports invalid tool input as a tool execution error (see
// docs/decisions.md).
func InvalidArguments(tool string, problems ...string) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "Invalid arguments for '%s':", tool)
	for _, p := range problems {
		b.WriteString("\n- ")
		b.WriteString(p)
	}
	return Errorf("%s", b.String())
}

// Invalid is the answer to arguments Decode refused: every handler
// answers a decode failure with it and nothing else.
func (c *Call) Invalid(err error) *mcp.CallToolResult {
	return InvalidArguments(c.Spec.Name, argumentProblem(err))
}

// argumentProblem says what encoding/json refused, in the words of the
// schema validator's problems ("at '/path': ...").
func argumentProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fmt.Sprintf("arguments must be an object, not %s", te.Value)
		}
		return fmt.Sprintf("at '/%s': %s does not fit %s", strings.ReplaceAll(te.Field, ".", "/"), te.Value, te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "arguments are not valid JSON: " + err.Error()
	}
	return err.Error()
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
// A handler answers its error with c.Invalid.
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
