package server

import (
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
)

// cursor is a tools/list page position: base64url of {offset, epoch}. A
// cursor from before the listing changed (another epoch) or one that does
// not decode starts again at the first page.
type cursor struct {
	Offset int    `json:"offset"`
	Epoch  uint64 `json:"epoch"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, false
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.Offset < 0 {
		return cursor{}, false
	}
	return c, true
}

// toolsList is tools/list's answer with each tool's JSON rendered once per
// catalog entry (catalog.Entry.Listing) instead of on every request.
type toolsList struct {
	mcp.ResultBase
	Tools      []json.RawMessage `json:"tools"`
	NextCursor string            `json:"nextCursor,omitempty"`
	mcp.Cacheable
}

// listTools answers tools/list for this session: its projection in
// catalog order, paged when the client sends a cursor or paging is on,
// with schemas deferred when EVOKORE_TOOL_SCHEMA_MODE=deferred.
func (v *View) listTools(req *mcp.ListToolsRequest) *toolsList {
	s := v.srv
	snap := s.catalog.Snapshot()
	gen := s.gen.Load()
	entries := snap.Project(gen.profile.Profile, s.legacy, v.sess.Active)
	// The listing depends on the session's profile and activations.
	res := &toolsList{Cacheable: mcp.Cacheable{CacheScope: "private"}}

	var requested string
	if req != nil && req.Params != nil {
		requested = req.Params.Cursor
	}
	if requested != "" || s.settings.Catalog.Pagination {
		// The epoch changes whenever this session's listing can change:
		// the catalog, the session's activations, a reload's profile.
		epoch := (snap.Epoch<<20 | v.sess.Generation()&(1<<20-1)) ^ gen.number<<52
		offset := 0
		if c, ok := decodeCursor(requested); ok && c.Epoch == epoch {
			offset = c.Offset
		}
		size := s.settings.Catalog.PageSize
		if offset >= len(entries) {
			entries = nil
		} else {
			end := min(offset+size, len(entries))
			if end < len(entries) {
				res.NextCursor = cursor{Offset: end, Epoch: epoch}.encode()
			}
			entries = entries[offset:end]
		}
	}

	deferred := s.schemasDeferred()
	res.Tools = make([]json.RawMessage, len(entries))
	for i, e := range entries {
		if deferred && e.Name != catalog.DescribeTool {
			res.Tools[i] = e.DeferredListing()
		} else {
			res.Tools[i] = e.Listing()
		}
	}
	return res
}

// schemasDeferred reports whether listings omit schemas. The first
// deferred listing arms a fallback: a client that never calls
// describe_tool cannot use deferred schemas, so after the fallback delay
// the router lists full schemas for the rest of its life and tells every
// session.
func (s *Server) schemasDeferred() bool {
	if s.settings.Catalog.SchemaMode != catalog.SchemaDeferred || s.deferFallback.Load() {
		return false
	}
	s.deferArm.Do(func() {
		delay := s.settings.Catalog.SchemaFallback
		time.AfterFunc(delay, func() {
			if s.describeSeen.Load() {
				// Said on stderr so an operator (and a test) can see the
				// fallback was considered and not needed.
				s.log.Info("[EVOKORE] Schema deferral kept: the client used describe_tool in time", "within", delay)
				return
			}
			s.deferFallback.Store(true)
			// EVOKORE-MCP's line, which scripts match: kept to the byte.
			s.log.Info("[EVOKORE] Schema-deferral fallback: client did not call describe_tool within " + delay.String() + "; listing full schemas from now on.")
			for _, sess := range s.Sessions() {
				sess.Invalidate()
			}
		})
	})
	return true
}

// InputSchema is the input schema clients are shown for the tool they
// call by name, for the streamable HTTP front's check of a call's
// Mcp-Param-* headers against its x-mcp-header annotations (a proxied
// tool's is its child's, annotations kept). listed reports whether a
// client without a session finds that schema in tools/list: it does not
// for a tool it must discover (dynamic mode) or when listings defer
// schemas, so it cannot know what to mirror. ok is false when no tool has
// that name; schema is nil for a child's tool that annotates no argument.
func (s *Server) InputSchema(name string) (schema any, listed, ok bool) {
	e, ok := s.catalog.Snapshot().Lookup(name)
	if !ok || e.Tool == nil {
		return nil, false, false
	}
	if e.Source == catalog.SourceProxy && !e.ParamHeaders {
		// Nothing to check; the schema's walk and the visibility are
		// what a sessionless call's header check cost.
		return nil, false, true
	}
	deferred := s.settings.Catalog.SchemaMode == catalog.SchemaDeferred && !s.deferFallback.Load()
	listed = !deferred && catalog.Visible(e, s.gen.Load().profile.Profile, s.legacy, nil)
	return e.Tool.InputSchema, listed, true
}
