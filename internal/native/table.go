package native

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/session"
)

// Call is one validated call of a native tool.
type Call struct {
	Spec Spec
	// Args are the arguments as the client sent them, minus anything the
	// pipeline consumed (such as an approval token).
	Args    json.RawMessage
	Session *session.Session
	// Meta is the request's _meta, for progress tokens.
	Meta mcp.Meta
	// Bound, when set, is what an approval of this call bound besides its
	// arguments (router.Call.Bound): the handler runs only what still
	// hashes to it.
	Bound string
}

// Handler runs a native tool. An error a model can act on belongs in an
// isError result; a returned error becomes a JSON-RPC error.
type Handler func(ctx context.Context, call *Call) (*mcp.CallToolResult, error)

// Table binds handlers to the generated specs. Managers bind their tools
// when the router is assembled; tools nobody bound are not served.
type Table struct {
	handlers [NumTools]Handler
}

// Bind sets the handler of a native tool.
func (t *Table) Bind(id ToolID, h Handler) { t.handlers[id] = h }

// Handler returns the handler bound to the named tool.
func (t *Table) Handler(name string) (Handler, bool) {
	id, ok := byName[name]
	if !ok || t.handlers[id] == nil {
		return nil, false
	}
	return t.handlers[id], true
}

// Entries returns catalog entries of the bound tools, in table order.
func (t *Table) Entries() []*catalog.Entry {
	hashes := specHashes()
	var out []*catalog.Entry
	for _, s := range specs {
		if t.handlers[s.ID] != nil {
			e := catalog.NewHashedEntry(s.Tool(), catalog.SourceNative, hashes[s.ID])
			e.TaskSupport = s.TaskSupport
			out = append(out, e)
		}
	}
	return out
}

// specHashes are the definition hashes of the native tools: the same for
// every table of the process, so they are computed once.
var specHashes = sync.OnceValue(func() (h [NumTools]string) {
	for _, s := range specs {
		h[s.ID] = catalog.DefinitionHash(s.Tool())
	}
	return h
})

// Prepare computes ahead of time what every Table's Entries share (the
// definition hashes, about a millisecond). The router calls it on a
// goroutine while it reads its configuration, so that the work is done
// on another core by the time the native entries are needed.
func Prepare() { specHashes() }

// Unbound lists the native tools no manager has bound.
func (t *Table) Unbound() []string {
	var out []string
	for _, s := range specs {
		if t.handlers[s.ID] == nil {
			out = append(out, s.Name)
		}
	}
	return out
}
