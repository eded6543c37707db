package server

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
)

// newEra is the first protocol version without sessions (MCP 2026-07-28):
// every request carries its version, capabilities and client info in
// _meta, and every result says whether it is complete.
const newEra = "2026-07-28"

// newProtocol reports whether req was sent under the sessionless
// protocol: the version its _meta names, else the one its session
// negotiated.
func newProtocol(req mcp.Request) bool {
	// A notification's params may be a typed nil, whose GetMeta panics.
	if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
		if v, ok := p.GetMeta()[mcp.MetaKeyProtocolVersion].(string); ok && v != "" {
			return v >= newEra
		}
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
		if ip := ss.InitializeParams(); ip != nil {
			return ip.ProtocolVersion >= newEra
		}
	}
	return false
}

// completed is res answered to a request of the sessionless protocol,
// whose results must say "resultType": "complete", or "input_required"
// when they ask the client for input (an approval). The go-sdk sets it on
// the results of its own handlers; the router answers tools, prompts and
// resources itself, so it says so here. A result that already carries a
// resultType is sent as it is.
func completed(res mcp.Result) mcp.Result {
	if res == nil {
		return nil
	}
	if _, done := res.(completeResult); done {
		return res
	}
	return completeResult{res}
}

type completeResult struct{ mcp.Result }

// asksInput reports whether res is input_required: a call, prompt or
// read that asks the client for input (an approval, a child's question).
func asksInput(res mcp.Result) bool {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r.InputRequests != nil
	case *mcp.GetPromptResult:
		return r.InputRequests != nil
	case *mcp.ReadResourceResult:
		return r.InputRequests != nil
	}
	return false
}

func (r completeResult) MarshalJSON() ([]byte, error) {
	// Written as the SDK writes every other answer, without escaping
	// <, > and & (a listing would cost more tokens in the new era).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(r.Result)
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if err != nil || len(b) < 2 || b[0] != '{' || hasKey(b, "resultType") {
		return b, err
	}
	kind := "complete"
	if asksInput(r.Result) {
		kind = "input_required"
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, `{"resultType":"`+kind+`"`...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

// hasKey reports whether the JSON object b has key at its top level (a
// tool whose schema names a property resultType does not count).
func hasKey(b []byte, key string) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		if t == key {
			return true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
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
