package proxy

//lint:file-ignore SA1019 sampling, roots and logging pass through on purpose; see docs/decisions.md

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/session"
)

// routes remember which client session a child's messages belong to.
//
// A child is shared by every session, and nothing in a child's request
// (sampling, elicitation, roots) or log message says which of our calls
// it belongs to. So the router attributes it to the session whose call to
// that child is open right now. With no call open, or calls from several
// sessions open at once, sampling and elicitation are refused: asking the
// wrong person to approve a completion is worse than not asking. Roots and
// log messages, which a child also sends outside calls, go to the only
// connected session when there is exactly one (stdio), and nowhere else.
//
// Progress notifications carry a token the router minted for the call: an
// unguessable value that names the child it was given to, so one child
// cannot report progress on another's call.
type routes struct {
	mu       sync.Mutex
	progress map[string]progressRoute
	// open holds the contexts of the calls in flight per child and
	// session. A message passed on for a call is sent under its context:
	// over streamable HTTP that is what puts it on the call's own response
	// stream, where the client expects it.
	open map[string]map[*session.Session][]context.Context
}

type progressRoute struct {
	server string
	sess   *session.Session
	token  any
	ctx    context.Context
}

func newRoutes() routes {
	return routes{progress: map[string]progressRoute{}, open: map[string]map[*session.Session][]context.Context{}}
}

// begin records a call from sess to server and, when the client asked for
// progress, mints the token the child will report under. end must be
// called when the call returns.
func (r *routes) begin(ctx context.Context, server string, sess *session.Session, clientToken any) (childToken string, end func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sess != nil {
		m := r.open[server]
		if m == nil {
			m = map[*session.Session][]context.Context{}
			r.open[server] = m
		}
		m[sess] = append(m[sess], ctx)
	}
	if clientToken != nil && sess != nil {
		childToken = "evokore-" + randomHex(16)
		r.progress[childToken] = progressRoute{server: server, sess: sess, token: clientToken, ctx: ctx}
	}
	return childToken, func() {
		r.mu.Lock()
		if m := r.open[server]; m != nil && sess != nil {
			calls := m[sess]
			for i, c := range calls {
				if c == ctx {
					calls = append(calls[:i:i], calls[i+1:]...)
					break
				}
			}
			if len(calls) == 0 {
				delete(m, sess)
			} else {
				m[sess] = calls
			}
		}
		r.mu.Unlock()
		if childToken == "" {
			return
		}
		// The SDK hands notifications to handlers concurrently with the
		// response, so the last progress step can arrive after the call
		// ends: keep the route a little longer.
		time.AfterFunc(progressGrace, func() {
			r.mu.Lock()
			delete(r.progress, childToken)
			r.mu.Unlock()
		})
	}
}

// progressGrace is how long a finished call's progress route survives.
const progressGrace = 5 * time.Second

// progressRoute finds the call a child's progress token belongs to; a
// token minted for another child is not found.
func (r *routes) progressRoute(server string, token any) (progressRoute, bool) {
	key, ok := token.(string)
	if !ok {
		return progressRoute{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	pr, ok := r.progress[key]
	if !ok || pr.server != server {
		return progressRoute{}, false
	}
	return pr, true
}

// caller is the one session with a call open to server, and the context
// of its latest open call; nil when there is none or more than one.
func (r *routes) caller(server string) (*session.Session, context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var only *session.Session
	var ctx context.Context
	for sess, calls := range r.open[server] {
		if only != nil {
			return nil, nil
		}
		only, ctx = sess, calls[len(calls)-1]
	}
	return only, ctx
}

// callContext is what a message passed on for a call is sent under: the
// call's values (which tie it to the call's stream), ended when either the
// call or the child's own request ends.
func callContext(call, own context.Context) (context.Context, context.CancelFunc) {
	if call == nil {
		return context.WithCancel(own)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(call))
	stopCall := context.AfterFunc(call, cancel)
	stopOwn := context.AfterFunc(own, cancel)
	return ctx, func() {
		stopCall()
		stopOwn()
		cancel()
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// peerFor picks the client a child's request goes to: the session whose
// call to the child is open. Outside a call, with allowLone, the only
// connected session. accept checks the client declared what is asked; the
// error says why no client was found.
// The context returned is the open call's (nil outside a call).
func (s *Supervisor) peerFor(server, what string, allowLone bool, accept func(*mcp.ClientCapabilities) bool) (session.Peer, context.Context, error) {
	sess, call := s.routes.caller(server)
	if sess == nil && allowLone {
		if all := s.opts.Sessions(); len(all) == 1 {
			sess = all[0]
		}
	}
	if sess == nil || sess.Peer == nil {
		return nil, nil, unattributed(server, what)
	}
	peer := sess.Peer
	if h := heldOf(call); h != nil && what != "log" {
		// A call of a caller of the new era held for its retry: the
		// request reaches the caller as input_required (held.go).
		peer = heldPeer{h: h, caller: peer}
	} else if what != "log" {
		if err := takesNoRequest(sess, server, what); err != nil {
			return nil, nil, err
		}
	}
	ip := peer.InitializeParams()
	if ip == nil || !accept(ip.Capabilities) {
		return nil, nil, unsupported(what)
	}
	return peer, call, nil
}

func anyCaps(*mcp.ClientCapabilities) bool { return true }

func hasSampling(c *mcp.ClientCapabilities) bool    { return c != nil && c.Sampling != nil }
func hasElicitation(c *mcp.ClientCapabilities) bool { return c != nil && c.Elicitation != nil }
func hasRoots(c *mcp.ClientCapabilities) bool {
	return c != nil && (c.RootsV2 != nil || c.Roots != (mcp.RootCapabilities{}))
}

// clientOptions builds the router's client for one child: it offers the
// child only what the client can answer, and passes everything through.
func (c *child) clientOptions(caps *mcp.ClientCapabilities) *mcp.ClientOptions {
	s := c.sup
	id := c.spec.ID
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		// A child's input_required is the router's to route (era.go):
		// the SDK must not answer it from the handlers below.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.requestRelist()
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			pr, ok := s.routes.progressRoute(id, req.Params.ProgressToken)
			if !ok || pr.sess.Peer == nil {
				return
			}
			p := *req.Params
			p.ProgressToken = pr.token
			nctx, cancel := callContext(pr.ctx, context.WithoutCancel(ctx))
			defer cancel()
			_ = pr.sess.Peer.NotifyProgress(nctx, &p)
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			peer, call, err := s.peerFor(id, "log", true, anyCaps)
			if err != nil {
				return
			}
			p := *req.Params
			if p.Logger == "" {
				p.Logger = id
			}
			nctx, cancel := callContext(call, context.WithoutCancel(ctx))
			defer cancel()
			_ = peer.Log(nctx, &p)
		},
	}
	if hasSampling(caps) {
		opts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			peer, call, err := s.peerFor(id, "sampling", false, hasSampling)
			if err != nil {
				return nil, err
			}
			ctx, cancel := callContext(call, ctx)
			defer cancel()
			p := *req.Params
			p.Meta = withoutRelated(p.Meta) // the child's own task (childtask.go)
			return peer.CreateMessage(ctx, &p)
		}
	}
	if hasElicitation(caps) {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			peer, call, err := s.peerFor(id, "elicitation", false, hasElicitation)
			if err != nil {
				return nil, err
			}
			ctx, cancel := callContext(call, ctx)
			defer cancel()
			return peer.Elicit(ctx, named(id, req.Params))
		}
	}
	switch {
	case c.inst != nil:
		// An instance hears its caller's roots/list_changed.
		opts.Capabilities.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	case s.offersRoots(id, caps):
		opts.Capabilities.RootsV2 = &mcp.RootCapabilities{}
	}
	return opts
}

// unattributed refuses a child's request that no single open call owns.
func unattributed(server, what string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "evokore cannot tell which client session " + server + "'s " + what + " request belongs to: it is only passed on while exactly one session has a call open to " + server}
}

func unsupported(what string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "the connected MCP client does not support " + what}
}

// OpenCalls reports how many calls are in flight to the child server.
func (s *Supervisor) OpenCalls(server string) int {
	s.routes.mu.Lock()
	defer s.routes.mu.Unlock()
	n := 0
	for _, calls := range s.routes.open[server] {
		n += len(calls)
	}
	return n
}

// clientRequest is the child's request method with params as the SDK's
// client hands one to its handlers: an elicitation, a sampling request
// or a roots list; any other is refused.
func clientRequest(cs *mcp.ClientSession, method string, params []byte) (mcp.Request, error) {
	if params == nil {
		params = []byte("{}")
	}
	var req mcp.Request
	var p any
	switch method {
	case "elicitation/create":
		ep := new(mcp.ElicitParams)
		req, p = &mcp.ElicitRequest{Session: cs, Params: ep}, ep
	case "sampling/createMessage":
		cp := new(mcp.CreateMessageParams)
		req, p = &mcp.CreateMessageRequest{Session: cs, Params: cp}, cp
	case "roots/list":
		rp := new(mcp.ListRootsParams)
		req, p = &mcp.ListRootsRequest{Session: cs, Params: rp}, rp
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "evokore does not answer " + method + " from a server's task"}
	}
	if err := json.Unmarshal(params, p); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return req, nil
}

// receiving is how a poster answers a child's request: through mw (the
// connection's receiving middleware, the first outermost, as the SDK
// applies it) over the client's handlers in opts.
func receiving(opts *mcp.ClientOptions, mw []mcp.Middleware) mcp.MethodHandler {
	h := mcp.MethodHandler(func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.ElicitRequest:
			if opts.ElicitationHandler != nil {
				return opts.ElicitationHandler(ctx, r)
			}
		case *mcp.CreateMessageRequest:
			if opts.CreateMessageHandler != nil {
				return opts.CreateMessageHandler(ctx, r)
			}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "evokore does not answer " + method + " from this server"}
	})
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}
