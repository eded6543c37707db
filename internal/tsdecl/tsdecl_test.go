package tsdecl_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/tsdecl"
)

func TestDeclarationsTypeInputsAndOutputs(t *testing.T) {
	tools := []*mcp.Tool{
		{Name: "fs_read_text_file", Description: "Read a file.\nMore lines.", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"path":{"type":"string"},"head":{"type":"number"},"mode":{"enum":["a","b"]}},"required":["path"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`)},
		{Name: "odd-name", InputSchema: json.RawMessage(`{"type":"object","properties":{"tags":{"type":"array","items":{"type":["string","null"]}}},"additionalProperties":{"type":"integer"}}`)},
	}
	want := `declare const tools: {
  /** Read a file. */
  fs_read_text_file(args: {head?: number; mode?: "a" | "b"; path: string}): Promise<{content: string}>;
  "odd-name"(args: {tags?: (string | null)[]; [k: string]: number}): Promise<Content[]>;
  call(name: string, args?: object): Promise<unknown>;
};
type Content = {type: "text"; text: string} | {type: string; [k: string]: unknown};
`
	if got := tsdecl.Declarations(tools); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// A keyword a declaration cannot read (a tuple's items, a boolean
// subschema, a required that is no list) costs that keyword's typing, not
// the whole tool's.
func TestAnOddKeywordLeavesTheRestTyped(t *testing.T) {
	tools := []*mcp.Tool{{Name: "odd", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"path":{"type":"string"},"pair":{"type":"array","items":[{"type":"string"},{"type":"number"}]},"any":true},"required":"path"}`)}}
	want := "  odd(args: {any?: unknown; pair?: unknown[]; path?: string}): Promise<Content[]>;\n"
	if got := tsdecl.Declarations(tools); !strings.Contains(got, want) {
		t.Errorf("got:\n%s\nwant the line:\n%s", got, want)
	}
}
