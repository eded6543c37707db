package catalog

import (
	"bytes"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/evokore/evokore/internal/canonjson"
)

var printer = message.NewPrinter(language.English)

// CanonicalJSON renders v with sorted keys; see package canonjson.
func CanonicalJSON(v any) ([]byte, error) { return canonjson.Marshal(v) }

// compileSchema compiles a tool's input schema for argument validation.
// Child schemas are untrusted: no $ref is ever loaded from a file or the
// network.
func compileSchema(name string, schema any) (*jsonschema.Schema, error) {
	raw, err := canonjson.Marshal(schema)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	url := fmt.Sprintf("mcp://tools/%s.json", name)
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}
