package server

//lint:file-ignore SA1019 sampling, roots and logging pass through on purpose; see docs/decisions.md

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/stdio"
)

// A transport answers a proxied tools/call itself, before the go-sdk
// decodes it: the arguments stay the bytes the client sent and the result
// the bytes the child sent (see package proxy's doc), and the call runs
// through the same router pipeline as every call. The SDK's JSON decoding
// costs tens of KiB per message; this path a few. stdio takes such calls
// in fastCalls below, streamable HTTP in package httpsession; everything
// else (native tools, names not in the catalog, params it does not know)
// goes on to the SDK unchanged.

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

// stdioMeta is what a stdio call's _meta may carry on the fast path: a
// progress token (progress is written to the same stream) and the trace
// context. Anything else (the per-request protocol of 2026-07-28, say) is
// the SDK's to read.
func stdioMeta(k string) bool {
	return k == "progressToken" || k == "traceparent" || k == "tracestate"
}

// fastCalls takes the stdio session's proxied tools/call: each runs on
// the goroutine that read it while reading goes on on another (package
// stdio), so calls run concurrently as the SDK runs its own.
type fastCalls struct {
	view *view

	mu sync.Mutex
	// inflight maps a taken call's raw id to its cancel, for
	// notifications/cancelled.
	inflight map[string]context.CancelFunc
}

var _ stdio.FastPath = (*fastCalls)(nil)

// Take implements stdio.FastPath.
func (f *fastCalls) Take(m stdio.Message, r stdio.Replier) (func(), bool) {
	switch m.Method {
	case "notifications/cancelled":
		return nil, f.cancel(m)
	case "tools/call":
		if m.ID != nil {
			return f.call(m, r)
		}
	}
	return nil, false
}

// cancel cancels a taken call; cancellations of other requests are the
// SDK's.
func (f *fastCalls) cancel(m stdio.Message) bool {
	if m.Params == nil {
		return false
	}
	id := rawjson.Member(m.Params, "requestId")
	if id == nil {
		return false
	}
	f.mu.Lock()
	cancel, ok := f.inflight[string(id)]
	f.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

// call takes a tools/call for a proxied tool and returns it to run, or
// returns false to leave it to the SDK.
func (f *fastCalls) call(m stdio.Message, r stdio.Replier) (func(), bool) {
	v := f.view
	if v.ss == nil || v.ss.InitializeParams() == nil {
		return nil, false // the SDK refuses calls before initialize
	}
	p, ok := v.srv.TakeProxied(v.sess, m.Params, stdioMeta)
	if !ok {
		return nil, false
	}
	key := string(m.ID)
	f.mu.Lock()
	if _, dup := f.inflight[key]; dup {
		f.mu.Unlock()
		return nil, false // the SDK answers a reused id as it always did
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.inflight[key] = cancel
	f.mu.Unlock()
	return func() {
		defer cancel()
		res, raw, err := p.Run(ctx)
		// The id is free again once answered: a client may reuse it.
		f.mu.Lock()
		delete(f.inflight, key)
		f.mu.Unlock()
		stdio.Answer(r, m.ID, res, raw, err)
	}, true
}

// ParamHeaders reports whether the tool declares x-mcp-header arguments,
// which a 2026-07-28 request must repeat as headers.
func (p *ProxiedCall) ParamHeaders() bool { return p.c.Entry.ParamHeaders }
