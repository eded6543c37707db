package tsdecl_test

import (
	"encoding/json"
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
