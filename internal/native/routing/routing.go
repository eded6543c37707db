// Package routing serves the native tools that look at the router itself:
// describe_tool (full definitions of any tool) and proxy_server_status
// (the children's health).
package routing

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/status"
	"github.com/evokore/evokore/internal/tsdecl"
)

// Catalog is where tool definitions come from.
type Catalog interface {
	Snapshot() *catalog.Snapshot
}

// Children reports the child servers.
type Children interface {
	Status() []status.Server
}

// Register binds describe_tool and proxy_server_status.
func Register(t *native.Table, cat Catalog, children Children) {
	t.Bind(native.DescribeTool, describeTool(cat, children))
	t.Bind(native.ProxyServerStatus, serverStatus(children))
}

// Described is describe_tool's answer; each schema is the full tool
// definition as tools/list renders it.
type Described struct {
	Schemas []json.RawMessage `json:"schemas"`
	Unknown []string          `json:"unknown"`
	// NotSearchable names the servers still starting with no tools
	// known yet, when some name was unknown: it may be theirs.
	NotSearchable []string `json:"notSearchable,omitempty"`
}

func describeTool(cat Catalog, children Children) native.Handler {
	return func(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
		var in struct {
			Tools  []any  `json:"tools"`
			Format string `json:"format"`
		}
		if err := call.Decode(&in); err != nil {
			return call.Invalid(err), nil
		}
		snap := cat.Snapshot()
		out := Described{Schemas: []json.RawMessage{}, Unknown: []string{}}
		var seen []string
		var found []*mcp.Tool
		for _, v := range in.Tools {
			name, ok := v.(string) // EVOKORE-MCP skips non-strings
			if !ok {
				continue
			}
			name = strings.TrimSpace(name)
			if name == "" || slices.Contains(seen, name) {
				continue
			}
			seen = append(seen, name)
			if e, ok := snap.Lookup(name); ok {
				out.Schemas = append(out.Schemas, e.Listing())
				found = append(found, e.Tool)
			} else {
				out.Unknown = append(out.Unknown, name)
			}
		}
		if len(out.Unknown) > 0 && children != nil {
			out.NotSearchable = startingServers(children)
		}
		if in.Format == "typescript" {
			// What a run_code program is written against: far fewer
			// tokens than the schemas.
			text := tsdecl.Declarations(found)
			if len(out.Unknown) > 0 {
				text += "// unknown: " + strings.Join(out.Unknown, ", ") + "\n"
			}
			return native.Text("%s", text), nil
		}
		res := native.JSON(out)
		res.StructuredContent = out
		return res, nil
	}
}

// Status is proxy_server_status's answer.
type Status struct {
	TotalServers int             `json:"totalServers"`
	Servers      []status.Server `json:"servers"`
}

func serverStatus(children Children) native.Handler {
	return func(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
		var in struct {
			ServerID string `json:"server_id"`
		}
		if err := call.Decode(&in); err != nil {
			return call.Invalid(err), nil
		}
		all := children.Status()
		if id := strings.TrimSpace(in.ServerID); id != "" {
			for _, s := range all {
				if s.ID == id {
					return native.JSON(Status{TotalServers: 1, Servers: []status.Server{s}}), nil
				}
			}
			return native.Errorf("No proxied child server found for '%s'.", id), nil
		}
		if all == nil {
			all = []status.Server{}
		}
		return native.JSON(Status{TotalServers: len(all), Servers: all}), nil
	}
}
