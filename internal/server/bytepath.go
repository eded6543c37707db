package server

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// The byte path (package ingress): a transport offers the router the
// tools/call messages it read, before the go-sdk decodes them, and the
// router takes those the rule lets it carry; the call then runs through
// the same pipeline as every call, with the arguments kept as the bytes
// the client sent and the result as the bytes the child sent (see
// package proxy). The SDK's JSON decoding costs tens of KiB per message;
// this path a few.

// Take is the byte path's rule, the one place it is applied (see package
// ingress): m, a tools/call sent by v's client and delivered as via says,
// is carried when v's client is past its handshake (or v serves a
// sessionless request), the tool is a child's, and the params hold
// nothing but name, arguments and _meta that via delivers. Anything else
// (task augmentation, input responses, a native tool, a name not in the
// catalog) is left to the SDK path.
func (s *Server) Take(v ingress.View, m ingress.Message, via ingress.Via) (ingress.Call, bool) {
	sess := v.Session()
	if m.Method != ingress.MethodCall || m.Params == nil || !sess.Stateless && v.InitializeParams() == nil {
		// The SDK refuses calls before initialize.
		return nil, false
	}
	name, args, rawMeta, ok := callParams(m.Params)
	if !ok {
		return nil, false
	}
	entry, found := s.catalog.Snapshot().Lookup(name)
	if !found || entry.Source != catalog.SourceProxy {
		return nil, false
	}
	var md mcp.Meta
	if rawMeta != nil {
		if json.Unmarshal(rawMeta, &md) != nil {
			return nil, false
		}
		for k := range md {
			if !via.Delivers(k) {
				return nil, false
			}
		}
	}
	if sess.Stateless && sess.Peer == nil {
		peer, ok := session.RequestPeer(rawMeta)
		if !ok {
			return nil, false
		}
		sess.Peer = peer
	}
	return &carried{srv: s, c: &router.Call{Entry: entry, Session: sess, Args: args, Meta: md, Raw: &router.RawResult{}}}, true
}

// callParams reads a tools/call's params in place: its name, arguments
// and _meta, or false when it holds anything else (task augmentation,
// input responses, members of a newer protocol).
func callParams(params []byte) (name string, args, meta []byte, ok bool) {
	ok = true
	if rawjson.Members(params, func(k string, v []byte) bool {
		switch k {
		case "name":
			name, ok = rawjson.String(v)
		case "arguments":
			args = v
		case "_meta":
			meta = v
		default:
			ok = false
		}
		return ok
	}) != nil || !ok || name == "" {
		return "", nil, nil, false
	}
	return name, args, meta, true
}

// carried is a call the byte path carries.
type carried struct {
	c   *router.Call
	srv *Server
}

// Run runs the call through the router (ingress.Call). The answer is the
// child's result bytes when the child answered, framed for the era of a
// sessionless request (package era); else the router's own result, or a
// JSON-RPC error.
func (p *carried) Run(ctx context.Context) (res *mcp.CallToolResult, raw []byte, err error) {
	p.c.Session.Touch()
	res, err = p.srv.router.Run(ctx, p.c)
	if err != nil {
		return nil, nil, err
	}
	if res != nil && res == p.c.Raw.Result {
		raw = p.c.Raw.Bytes
	}
	if !p.c.Session.Stateless {
		return res, raw, nil
	}
	if raw != nil {
		return res, era.CompleteBytes(raw), nil
	}
	if raw, err = era.ResultBytes(res, true); err != nil {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "cannot encode the result: " + err.Error()}
	}
	return res, raw, nil
}
