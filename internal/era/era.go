// Package era owns the two protocol eras the router speaks on both of
// its sides: which era a protocol version or a request belongs to, the
// session era of MCP 2025-11-25 (initialize, then a session) or the
// sessionless era of 2026-07-28 (every request carries its version, the
// client's capabilities and information in _meta), and how a result is
// framed in the sessionless era, whose results all say "resultType".
//
// It is the one place that decides and frames: the session views, the
// streamable HTTP front, the supervisor of children and the policy all
// ask it, so the eras cannot drift apart between them.
package era

import (
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/jsonenc"
	"github.com/evokore/evokore/internal/rawjson"
)

const (
	// SessionVersion is the protocol version of the session era.
	SessionVersion = "2025-11-25"
	// SessionlessVersion is the first protocol version without sessions.
	SessionlessVersion = "2026-07-28"
)

// Sessionless reports whether version is of the sessionless era; later
// versions are too (the versions are dates, so they compare as strings).
func Sessionless(version string) bool { return version >= SessionlessVersion }

// Served reports whether version is the sessionless protocol version the
// router serves itself; a later one is the go-sdk's to refuse.
func Served(version string) bool { return version == SessionlessVersion }

// PrimesStreams reports whether a POST's event stream under version
// begins with a priming event, which lets a client resume it (SEP-1699):
// from 2025-11-25 until the sessionless era, which has no resumable
// streams.
func PrimesStreams(version string) bool {
	return version >= SessionVersion && !Sessionless(version)
}

// Batches reports whether version still allows JSON-RPC batches: MCP
// removed them in 2025-06-18. An unknown version (none sent) allows them,
// as the go-sdk does.
func Batches(version string) bool { return version == "" || version < "2025-06-18" }

// SessionlessRequest reports whether req was sent under the sessionless
// protocol: the version its _meta names, else the one its session
// negotiated.
func SessionlessRequest(req mcp.Request) bool {
	// A notification's params may be a typed nil, whose GetMeta panics.
	if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
		if v, ok := p.GetMeta()[mcp.MetaKeyProtocolVersion].(string); ok && v != "" {
			return Sessionless(v)
		}
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		if ip := ss.InitializeParams(); ip != nil {
			return Sessionless(ip.ProtocolVersion)
		}
	}
	return false
}

// Complete is res answered to a request of the sessionless protocol,
// whose results must say "resultType": "complete", or "input_required"
// when they ask the client for input (an approval). The go-sdk sets it on
// the results of its own handlers; the router answers tools, prompts and
// resources itself, so it says so here. A result that already carries a
// resultType is sent as it is.
func Complete(res mcp.Result) mcp.Result {
	if res == nil {
		return nil
	}
	if _, done := res.(completeResult); done {
		return res
	}
	return completeResult{res}
}

type completeResult struct{ mcp.Result }

func (r completeResult) MarshalJSON() ([]byte, error) {
	// Written as the SDK writes every other answer, without escaping
	// <, > and & (a listing would cost more tokens in the new era).
	b, err := jsonenc.Marshal(r.Result)
	if err != nil {
		return b, err
	}
	kind := "complete"
	if asksInput(r.Result) {
		kind = "input_required"
	}
	return framed(b, kind), nil
}

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

// CompleteBytes is a child's raw result object as a result of the
// sessionless protocol: with "resultType":"complete" first when it has
// no resultType member (a child of the session era never says it, and
// never asks for input in its result). The child's bytes stay as they
// are otherwise: the fast path passes them on without decoding them.
func CompleteBytes(raw []byte) []byte { return framed(raw, "complete") }

// framed is the JSON object obj with "resultType":kind as its first
// member, or obj as it is when it is no object or already has one at its
// top level (a tool whose schema names a property resultType does not
// count).
func framed(obj []byte, kind string) []byte {
	i := rawjson.SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' || rawjson.Member(obj, "resultType") != nil {
		return obj
	}
	rest := obj[rawjson.SkipSpace(obj, i+1):]
	out := make([]byte, 0, len(rest)+len(kind)+18)
	out = append(out, `{"resultType":"`...)
	out = append(out, kind...)
	out = append(out, '"')
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// ResultBytes encodes a tools/call result the router answered itself
// (not a child's bytes) for a transport's fast path, as the SDK would
// send it: content never null, and, for a sessionless request, the
// resultType its era's results carry.
func ResultBytes(res *mcp.CallToolResult, sessionless bool) ([]byte, error) {
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	if sessionless {
		return json.Marshal(Complete(res))
	}
	return json.Marshal(res)
}
