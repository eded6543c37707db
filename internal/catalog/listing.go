package catalog

import (
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/jsonenc"
)

// listings caches the two forms of an entry's tools/list JSON.
type listings struct {
	once     sync.Once
	full     json.RawMessage
	deferred json.RawMessage
}

// Listing is the JSON a client receives for this tool in tools/list,
// computed once. Behaviour hints are written only where they differ from
// the MCP defaults (readOnly false, destructive true, idempotent false,
// open world true), and destructive/idempotent only for tools that write:
// the spec gives them no meaning for read-only tools. Every client reads
// the same facts from fewer tokens.
func (e *Entry) Listing() json.RawMessage {
	e.render()
	return e.listings.full
}

// DeferredListing is Listing without the input schema, for
// EVOKORE_TOOL_SCHEMA_MODE=deferred; describe_tool gives the schema.
func (e *Entry) DeferredListing() json.RawMessage {
	e.render()
	return e.listings.deferred
}

// listedTool is mcp.Tool with lean annotations.
type listedTool struct {
	Meta         map[string]any `json:"_meta,omitempty"`
	Name         string         `json:"name"`
	Title        string         `json:"title,omitempty"`
	Description  string         `json:"description,omitempty"`
	InputSchema  any            `json:"inputSchema"`
	OutputSchema any            `json:"outputSchema,omitempty"`
	Annotations  *hints         `json:"annotations,omitempty"`
	Icons        []mcp.Icon     `json:"icons,omitempty"`
	Execution    *execution     `json:"execution,omitempty"`
}

// execution is a tool's execution hints (MCP 2025-11-25): whether it runs
// as a task. The go-sdk's Tool has no field for it.
type execution struct {
	TaskSupport string `json:"taskSupport"`
}

type hints struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

var yes, no = true, false

func leanHints(a *mcp.ToolAnnotations) *hints {
	if a == nil {
		return nil
	}
	h := &hints{Title: a.Title}
	if a.ReadOnlyHint {
		h.ReadOnlyHint = &yes
	} else {
		if a.DestructiveHint != nil && !*a.DestructiveHint {
			h.DestructiveHint = &no
		}
		if a.IdempotentHint {
			h.IdempotentHint = &yes
		}
	}
	if a.OpenWorldHint != nil && !*a.OpenWorldHint {
		h.OpenWorldHint = &no
	}
	if *h == (hints{}) {
		return nil
	}
	return h
}

func (e *Entry) render() {
	e.listings.once.Do(func() {
		t := e.Tool
		lt := listedTool{
			Meta:         t.Meta,
			Name:         t.Name,
			Title:        t.Title,
			Description:  t.Description,
			InputSchema:  t.InputSchema,
			OutputSchema: t.OutputSchema,
			Annotations:  leanHints(t.Annotations),
			Icons:        t.Icons,
		}
		if e.TaskSupport != "" {
			lt.Execution = &execution{TaskSupport: e.TaskSupport}
		}
		e.listings.full = marshal(lt)
		meta := map[string]any{}
		for k, v := range t.Meta {
			meta[k] = v
		}
		meta["schema_deferred"] = true
		lt.Meta = meta
		lt.InputSchema = map[string]any{"type": "object", "properties": map[string]any{}, "x-evokore-schema-deferred": true}
		lt.OutputSchema = nil
		e.listings.deferred = marshal(lt)
	})
}

// marshal encodes without HTML escaping: "<dir>" costs more tokens as
// "\u003cdir\u003e" and means the same.
func marshal(v any) json.RawMessage {
	b, err := jsonenc.Marshal(v)
	if err != nil {
		// The tool was decoded from JSON; it always encodes back.
		panic(err)
	}
	return b
}
