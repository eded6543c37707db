package proxy

//lint:file-ignore SA1019 sampling, roots and logging pass through on purpose; see docs/decisions.md

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	// open counts the calls in flight per child and session.
	open map[string]map[*session.Session]int
}

type progressRoute struct {
	server string
	sess   *session.Session
	token  any
}

func newRoutes() routes {
	return routes{progress: map[string]progressRoute{}, open: map[string]map[*session.Session]int{}}
}

// begin records a call from sess to server and, when the client asked for
// progress, mints the token the child will report under. end must be
// called when the call returns.
func (r *routes) begin(server string, sess *session.Session, clientToken any) (childToken string, end func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sess != nil {
		m := r.open[server]
		if m == nil {
			m = map[*session.Session]int{}
			r.open[server] = m
		}
		m[sess]++
	}
	if clientToken != nil && sess != nil {
		childToken = "evokore-" + randomHex(16)
		r.progress[childToken] = progressRoute{server: server, sess: sess, token: clientToken}
	}
	return childToken, func() {
		r.mu.Lock()
		if m := r.open[server]; m != nil && sess != nil {
			if m[sess]--; m[sess] <= 0 {
				delete(m, sess)
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

// caller is the one session with a call open to server; nil when there is
// none or more than one.
func (r *routes) caller(server string) *session.Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	var only *session.Session
	for sess := range r.open[server] {
		if only != nil {
			return nil
		}
		only = sess
	}
	return only
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
func (s *Supervisor) peerFor(server, what string, allowLone bool, accept func(*mcp.ClientCapabilities) bool) (session.Peer, error) {
	sess := s.routes.caller(server)
	if sess == nil && allowLone {
		if all := s.opts.Sessions(); len(all) == 1 {
			sess = all[0]
		}
	}
	if sess == nil || sess.Peer == nil {
		return nil, unattributed(server, what)
	}
	ip := sess.Peer.InitializeParams()
	if ip == nil || !accept(ip.Capabilities) {
		return nil, unsupported(what)
	}
	return sess.Peer, nil
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
			_ = pr.sess.Peer.NotifyProgress(context.WithoutCancel(ctx), &p)
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			peer, err := s.peerFor(id, "log", true, anyCaps)
			if err != nil {
				return
			}
			p := *req.Params
			if p.Logger == "" {
				p.Logger = id
			}
			_ = peer.Log(context.WithoutCancel(ctx), &p)
		},
	}
	if hasSampling(caps) {
		opts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			peer, err := s.peerFor(id, "sampling", false, hasSampling)
			if err != nil {
				return nil, err
			}
			return peer.CreateMessage(ctx, req.Params)
		}
	}
	if hasElicitation(caps) {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			peer, err := s.peerFor(id, "elicitation", false, hasElicitation)
			if err != nil {
				return nil, err
			}
			return peer.Elicit(ctx, req.Params)
		}
	}
	if hasRoots(caps) {
		opts.Capabilities.RootsV2 = &mcp.RootCapabilities{}
	}
	return opts
}

// rootsMiddleware answers a child's roots/list with the client's roots;
// the SDK's client would answer from its own static list.
func (s *Supervisor) rootsMiddleware(server string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			peer, err := s.peerFor(server, "roots", true, hasRoots)
			if err != nil {
				return nil, err
			}
			return peer.ListRoots(ctx, &mcp.ListRootsParams{})
		}
	}
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
	for _, c := range s.routes.open[server] {
		n += c
	}
	return n
}
