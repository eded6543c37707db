package server

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// A transport answers a proxied tools/call itself, before the go-sdk
// decodes it: the arguments stay the bytes the client sent and the result
// the bytes the child sent (see package proxy's doc), and the call runs
// through the same router pipeline as every call. The SDK's JSON decoding
// costs tens of KiB per message; this path a few. stdio takes such calls
// through stdio.Calls (ServeStdio), streamable HTTP in package
// httpsession; everything else (native tools, names not in the catalog,
// params it does not know) goes on to the SDK unchanged.

// MetaRule says which _meta members a transport's fast path accepts in a
// call it takes; a call carrying any other is left to the SDK.
type MetaRule func(key string) bool

// ProxiedCall is a proxied tools/call taken off a transport.
type ProxiedCall struct {
	c   *router.Call
	srv *Server
}

// TakeProxied returns the call that params (the request's params object,
// as the client sent it) describe for sess when it is a call of a proxied
// tool that a transport may answer itself; false leaves the request to
// the SDK.
func (s *Server) TakeProxied(sess *session.Session, params []byte, meta MetaRule) (*ProxiedCall, bool) {
	if params == nil {
		return nil, false
	}
	var name string
	var args, rawMeta []byte
	ok := true
	if rawjson.Members(params, func(k string, v []byte) bool {
		switch k {
		case "name":
			name, ok = rawjson.String(v)
		case "arguments":
			args = v
		case "_meta":
			rawMeta = v
		default:
			ok = false // task augmentation, input responses or anything newer: the SDK's
		}
		return ok
	}) != nil || !ok || name == "" {
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
			if !meta(k) {
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
	return &ProxiedCall{srv: s, c: &router.Call{Entry: entry, Session: sess, Args: args, Meta: md, Raw: &router.RawResult{}}}, true
}

// Name is the name the client called.
func (p *ProxiedCall) Name() string { return p.c.Entry.Name }

// Run runs the call through the router. The answer is raw, the child's
// result bytes, when not nil; else res, or err (a JSON-RPC error).
func (p *ProxiedCall) Run(ctx context.Context) (res *mcp.CallToolResult, raw []byte, err error) {
	p.c.Session.Touch()
	res, err = p.srv.router.Run(ctx, p.c)
	if err == nil && res != nil && res == p.c.Raw.Result {
		raw = p.c.Raw.Bytes
	}
	return res, raw, err
}

// StatelessSession is the session a request of a client without one
// (MCP 2026-07-28) acts under when a transport answers it itself: the
// same as StatelessView's, without building the view's MCP server.
func (s *Server) StatelessSession(so SessionOptions) *session.Session {
	role := so.Role
	if role == "" {
		role = s.gen.Load().role
	}
	sess := session.New(statelessID(role, so), role)
	sess.Identity = so.Identity
	sess.TTL = s.opts.Settings.SessionTTL
	sess.Stateless = true
	return sess
}

// ParamHeaders reports whether the tool declares x-mcp-header arguments,
// which a 2026-07-28 request must repeat as headers.
func (p *ProxiedCall) ParamHeaders() bool { return p.c.Entry.ParamHeaders }
