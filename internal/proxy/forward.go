package proxy

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/session"
)

// routes remember which client session a child's messages belong to.
// Progress notifications carry a token the router minted for the call;
// requests and log messages go to the session that most recently called
// the child, which is the only session a stdio router has.
type routes struct {
	mu       sync.Mutex
	seq      uint64
	progress map[string]progressRoute
	recent   map[string]*session.Session
}

type progressRoute struct {
	sess  *session.Session
	token any
}

// begin records a call from sess to server and, when the client asked for
// progress, mints the token the child will report under.
func (r *routes) begin(server string, sess *session.Session, clientToken any) (childToken string, end func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sess != nil {
		r.recent[server] = sess
	}
	if clientToken == nil || sess == nil {
		return "", func() {}
	}
	r.seq++
	childToken = fmt.Sprintf("evokore-%d", r.seq)
	r.progress[childToken] = progressRoute{sess: sess, token: clientToken}
	return childToken, func() {
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

func (r *routes) progressRoute(token any) (progressRoute, bool) {
	key, ok := token.(string)
	if !ok {
		return progressRoute{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	pr, ok := r.progress[key]
	return pr, ok
}

// peerFor picks the client a child's request or log message goes to: the
// session that last called the child, else the newest session for which
// accept returns true.
func (s *Supervisor) peerFor(server string, accept func(*mcp.ClientCapabilities) bool) session.Peer {
	s.routes.mu.Lock()
	sess := s.routes.recent[server]
	s.routes.mu.Unlock()
	ok := func(sess *session.Session) bool {
		if sess == nil || sess.Peer == nil {
			return false
		}
		ip := sess.Peer.InitializeParams()
		return ip != nil && accept(ip.Capabilities)
	}
	if ok(sess) {
		return sess.Peer
	}
	all := s.opts.Sessions()
	for i := len(all) - 1; i >= 0; i-- {
		if ok(all[i]) {
			return all[i].Peer
		}
	}
	return nil
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
			go c.relist()
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			pr, ok := s.routes.progressRoute(req.Params.ProgressToken)
			if !ok || pr.sess.Peer == nil {
				return
			}
			p := *req.Params
			p.ProgressToken = pr.token
			_ = pr.sess.Peer.NotifyProgress(context.WithoutCancel(ctx), &p)
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			peer := s.peerFor(id, anyCaps)
			if peer == nil {
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
			peer := s.peerFor(id, hasSampling)
			if peer == nil {
				return nil, unsupported("sampling")
			}
			return peer.CreateMessage(ctx, req.Params)
		}
	}
	if hasElicitation(caps) {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			peer := s.peerFor(id, hasElicitation)
			if peer == nil {
				return nil, unsupported("elicitation")
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
			peer := s.peerFor(server, hasRoots)
			if peer == nil {
				return nil, unsupported("roots")
			}
			return peer.ListRoots(ctx, &mcp.ListRootsParams{})
		}
	}
}

func unsupported(what string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "the connected MCP client does not support " + what}
}
