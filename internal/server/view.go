package server

//lint:file-ignore SA1019 sampling, roots and logging pass through on purpose; see docs/decisions.md

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/events"
	"github.com/evokore/evokore/internal/handshake"
	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/logging"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/tracing"
)

// View is one client session's window on the router (ingress.View): its
// own mcp.Server, so that tools/list_changed reaches this session only.
// Open builds one for a session, Sessionless one for a single request of a
// client without a session.
//
// Building a view is separate from connecting it: Connect binds it to a
// transport at once (stdio, a resumed HTTP session), while the go-sdk's
// streamable handler connects the views of the sessions it opens itself;
// such a view binds to its ServerSession on its first request.
//
// tools/list and tools/call never reach the SDK's own tool registry: the
// middleware answers them from the catalog (in catalog order, hidden tools
// callable by name). The view keeps the names this session can see, and
// changing the registry is how the SDK notifies a session: the registry
// holds one placeholder tool, replaced whenever what the session sees
// changed. (One entry per visible tool cost two 32 KiB JSON decoders in
// the SDK's AddTool for each tool, 37 of them before the first handshake:
// see docs/decisions.md, "Startup".)
type View struct {
	srv  *Server
	sess *session.Session
	mcp  *mcp.Server
	// mirrored maps each listed name to the hash of the definition
	// listed, so a changed definition is announced like a new tool.
	// Only the view reads it; the SDK registry holds mirrorTool.
	mirrored map[string]string
	// mirroredRes are the resource URIs mirrored for notifications;
	// resourcesStale asks the next sync to announce them all again.
	mirroredRes    map[string]bool
	resourcesStale bool
	// mirroredPrompts are the child prompt names mirrored likewise.
	mirroredPrompts map[string]bool

	buildOnce sync.Once
	bindOnce  sync.Once
	bound     bool
	// answered is closed once the session's first request was handled:
	// keeping the mirror current starts then, not during the handshake.
	answered     chan struct{}
	answeredOnce sync.Once
	ss           *mcp.ServerSession

	// started is set once session_start was recorded, so session_end is
	// recorded for exactly the sessions that started.
	started atomic.Bool
	// onEnd run once when the session ends (see OnEnd).
	endMu sync.Mutex
	onEnd []func()
}

// Open builds the view of a new session acting as so (ingress.Router).
// It starts the router's background work, once, and connects nothing: a
// transport connects it (View.Connect), or serves its MCP server itself.
func (s *Server) Open(so ingress.SessionOptions) ingress.View {
	s.Start()
	v := s.newView(so)
	v.build()
	v.sync()
	return v
}

// Sessionless builds the view one request of a client without a session
// (MCP 2026-07-28) is served by (ingress.Router): it acts as so, under a
// session that activates nothing (so tools/list is the caller's role ×
// profile projection, the same for every request with the same inputs),
// never binds to the SDK's per-request session and sends no list
// changes. Its session's id is the same for every request of the same
// caller, so an approval held for one request is found by the retry on
// any replica. Its MCP server is built on the first call of MCP: a call
// the byte path carries never needs it. The children boot, once, without
// client capabilities, which such a client does not declare up front.
func (s *Server) Sessionless(so ingress.SessionOptions) ingress.View {
	s.Start()
	s.proxy.Start(nil)
	v := s.newView(so)
	v.sess.Stateless = true
	v.sess.ID = statelessID(v.sess.Role, so)
	return v
}

// statelessID is the session id of every request of one caller without a
// session: its role, tenant and subject.
func statelessID(role string, so ingress.SessionOptions) string {
	sum := sha256.Sum256([]byte(role + "\x00" + so.Identity.Tenant + "\x00" + so.Identity.Subject))
	return "stateless-" + hex.EncodeToString(sum[:8])
}

// MCP is the view's own MCP server, built on first use.
func (v *View) MCP() *mcp.Server {
	v.build()
	return v.mcp
}

// Session is the router's session the view serves.
func (v *View) Session() *session.Session { return v.sess }

// Connect serves the view over t: stdio's connection, or a resumed HTTP
// session's own streamable transport, whose saved state (when not nil)
// the SDK's session starts from, so that no initialize is played to it.
// A session resumed past its initialized notification is started as the
// notification would start it (its children boot with the client's
// capabilities, its start is recorded), and its log level reaches the
// children as the client's logging/setLevel did. The view is bound at
// once.
func (v *View) Connect(ctx context.Context, t mcp.Transport, state *mcp.ServerSessionState) (*mcp.ServerSession, error) {
	s := v.srv
	if s.isClosing() {
		return nil, ErrServerClosed
	}
	srv := v.MCP()
	// A client of the sessionless protocol on a connection of its own
	// sends no initialize: server/discover boots the children instead.
	srv.AddReceivingMiddleware(bootOnDiscover(s))
	ss, err := srv.Connect(ctx, t, &mcp.ServerSessionOptions{State: state})
	if err != nil {
		return nil, err
	}
	if !v.bind(ss) {
		_ = ss.Close()
		return nil, ErrServerClosed
	}
	if state != nil && state.InitializedParams != nil {
		v.initialized(state.InitializeParams)
	}
	if state != nil && state.LogLevel != "" {
		// As the client's logging/setLevel did where it set it.
		s.proxy.SetLogLevel(state.LogLevel)
	}
	return ss, nil
}

// Close ends the view's session.
func (v *View) Close() {
	if v.ss != nil {
		_ = v.ss.Close()
	}
	// Recorded here too: at shutdown the records close before the watcher
	// would notice.
	v.ended()
}

// InitializeParams are what the client sent in its initialize, or what
// the saved state it was resumed from holds; nil before the view bound to
// its session, and for a client that did not initialize.
func (v *View) InitializeParams() *mcp.InitializeParams {
	if ss := v.ss; ss != nil {
		return ss.InitializeParams()
	}
	return nil
}

// OnEnd registers fn to run once when the view's session ends.
func (v *View) OnEnd(fn func()) {
	v.endMu.Lock()
	defer v.endMu.Unlock()
	v.onEnd = append(v.onEnd, fn)
}

// mirrorTool is the registry's placeholder: replacing it makes the SDK
// send tools/list_changed (debounced, so a burst of changes is one
// notification). Clients never see it: tools/list and tools/call are
// answered by the middleware.
var mirrorTool = mcp.Tool{Name: "evokore_tools_changed", InputSchema: json.RawMessage(`{"type":"object"}`)}

// newView builds a session's view, without its MCP server; it starts
// nothing and connects nothing.
func (s *Server) newView(so ingress.SessionOptions) *View {
	v := &View{srv: s, answered: make(chan struct{})}
	role := so.Role
	if role == "" {
		role = s.gen.Load().role
	}
	v.sess = session.New("", role)
	v.sess.Identity = so.Identity
	v.sess.SetInbound(so.Inbound)
	v.sess.TTL = s.opts.Settings.SessionTTL
	return v
}

// build builds the view's MCP server and its mirror, once.
func (v *View) build() {
	v.buildOnce.Do(func() {
		s := v.srv
		v.mirrored, v.mirroredRes, v.mirroredPrompts = map[string]string{}, map[string]bool{}, map[string]bool{}
		opts := identity()
		opts.Logger = logging.AtLeast(s.log, slog.LevelWarn)
		opts.SubscribeHandler = func(ctx context.Context, req *mcp.SubscribeRequest) error {
			return s.children.Subscribe(ctx, v.sess, req)
		}
		opts.UnsubscribeHandler = func(ctx context.Context, req *mcp.UnsubscribeRequest) error {
			return s.children.Unsubscribe(ctx, v.sess, req)
		}
		opts.CompletionHandler = func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return s.children.Complete(ctx, v.sess, req)
		}
		// A caller's new roots reach its own instances only.
		opts.RootsListChangedHandler = func(context.Context, *mcp.RootsListChangedRequest) {
			s.proxy.RootsChanged(v.sess)
		}
		opts.InitializedHandler = func(_ context.Context, req *mcp.InitializedRequest) {
			v.initialized(req.Session.InitializeParams())
		}
		v.mcp = mcp.NewServer(&mcp.Implementation{Name: serverName, Version: s.opts.Version}, opts)
		v.mcp.AddReceivingMiddleware(handshake.Middleware, v.middleware)
	})
}

// initialized starts a session whose client sent its initialized
// notification (or was resumed past it): the children boot with the
// capabilities ip declares, and the session's start is recorded once.
func (v *View) initialized(ip *mcp.InitializeParams) {
	var caps *mcp.ClientCapabilities
	client := ""
	if ip != nil {
		caps = ip.Capabilities
		if ip.ClientInfo != nil {
			client = ip.ClientInfo.Name
		}
	}
	v.srv.proxy.Start(caps)
	if v.started.CompareAndSwap(false, true) {
		v.srv.records.Session(events.SessionStart, v.sess, client)
	}
}

// bind ties the view to its connected session, registers it with the
// server and starts keeping its mirror current. It reports false when the
// server is shutting down; the session must then be closed.
func (v *View) bind(ss *mcp.ServerSession) bool {
	v.bindOnce.Do(func() {
		v.ss = ss
		v.sess.ID = ss.ID()
		if v.sess.ID == "" {
			v.sess.ID = session.NewID("stdio")
		}
		v.sess.Peer = ss
		if !v.srv.attach(v) {
			return
		}
		v.bound = true
		v.srv.parts.Go(func() { v.watch(ss) })
	})
	return v.bound
}

// answer records that the session's first request was handled: the
// view's watch may begin, and so may the server's deferred work.
func (v *View) answer() {
	v.answeredOnce.Do(func() {
		close(v.answered)
		v.srv.handshook()
	})
}

// ended records session_end once for a session that started.
func (v *View) ended() {
	if v.started.CompareAndSwap(true, false) {
		v.srv.records.Session(events.SessionEnd, v.sess, "")
	}
}

func (v *View) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	handle := v.handler(next)
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		// The SDK runs requests on goroutines of its own and recovers
		// nothing: a panic here must cost one answer, not the router.
		defer func() {
			if p := recover(); p != nil {
				v.srv.log.Error("[EVOKORE] A request panicked; it answered an internal error and the router goes on", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
			}
		}()
		res, err = handle(ctx, method, req)
		if err == nil && method != "initialize" && era.SessionlessRequest(req) {
			res = era.Complete(res)
		}
		return res, err
	}
}

// handler answers what the router answers itself and passes the rest to
// next, the SDK's own handling.
func (v *View) handler(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "server/discover" {
			// A streamable HTTP client asks this on a throwaway session
			// before it initialises: it is no session of the router's.
			return next(ctx, method, req)
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			if v.sess.Stateless {
				// A stateless view serves one request: its session's peer
				// is that request's, so progress reaches its stream.
				v.sess.Peer = ss
			} else if !v.bind(ss) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "evokore is shutting down"}
			}
		}
		// Background work waits for the first answer: the handshake is
		// what a client waits on at start (docs/decisions.md, "Startup").
		defer v.answer()
		v.sess.Touch()
		switch method {
		case "subscriptions/listen":
			if v.sess.Stateless {
				// A sessionless client hears of changes on this stream
				// alone: the view keeps its mirror current while it is
				// open, from what it lists now.
				v.sync()
				v.syncResources()
				v.syncPrompts()
				stop := make(chan struct{})
				defer close(stop)
				go v.mirror(stop)
				// Listed with the sessions while it listens, so that a
				// child's resource update reaches it.
				if v.srv.attach(v) {
					defer v.srv.detach(v)
				}
			}
			return next(ctx, method, req)
		case "tools/list":
			return v.listTools(req.(*mcp.ListToolsRequest)), nil
		case "tools/call":
			params := req.(*mcp.CallToolRequest).Params
			if params.Name == catalog.DescribeTool {
				v.srv.describeSeen.Store(true)
			}
			if ex := req.GetExtra(); ex != nil {
				ctx = tracing.FromHeader(ctx, ex.Header) // _meta's trace context wins over it
			}
			res, err := v.srv.router.Call(ctx, v.sess, params)
			if err != nil {
				return nil, err
			}
			return res, nil
		}
		if method == "logging/setLevel" {
			res, err := next(ctx, method, req)
			if err == nil {
				if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok {
					v.srv.proxy.SetLogLevel(p.Level)
				}
			}
			return res, err
		}
		if res, ok, err := v.contentMethod(ctx, method, req); ok {
			if err != nil {
				return nil, err
			}
			return res, nil
		}
		return next(ctx, method, req)
	}
}

// sync records what this session lists and, when it changed, replaces
// the SDK registry's placeholder so that the SDK sends tools/list_changed.
func (v *View) sync() {
	s := v.srv
	entries := s.catalog.Snapshot().Project(s.gen.Load().profile.Profile, s.legacy, v.sess.Active)
	visible := make(map[string]string, len(entries))
	for _, e := range entries {
		visible[e.Name] = e.Hash
	}
	changed := false
	// An invalidated session re-announces everything: the names did not
	// change, but what the client should fetch did.
	if v.sess.TakeInvalidated() && len(v.mirrored) > 0 {
		clear(v.mirrored)
		changed = true
	}
	for name, hash := range v.mirrored {
		if h, ok := visible[name]; !ok || h != hash {
			delete(v.mirrored, name)
			changed = true
		}
	}
	for name, hash := range visible {
		if _, ok := v.mirrored[name]; !ok {
			v.mirrored[name] = hash
			changed = true
		}
	}
	if changed {
		t := mirrorTool
		v.mcp.AddTool(&t, nil)
	}
}

// watch keeps the mirror current until the session ends.
func (v *View) watch(ss *mcp.ServerSession) {
	done := make(chan struct{})
	go func() {
		_ = ss.Wait()
		close(done)
	}()
	// The mirror newView set stays until the first answer: syncing
	// resources and prompts builds the skills index, which the handshake
	// must not wait behind.
	select {
	case <-v.answered:
	case <-done:
		v.left()
		return
	}
	v.mirror(done)
	v.left()
}

// mirror keeps the view's mirror current until stop is closed: every
// change of what the session lists (the catalog, a reload, the children's
// content, its own activations, the skills) reaches the SDK's registry,
// which tells the client.
func (v *View) mirror(stop <-chan struct{}) {
	var contentChanged <-chan struct{}
	for {
		snap := v.srv.catalog.Snapshot()
		gen := v.srv.gen.Load()
		changed := v.sess.Changed()
		if c := v.srv.content; c != nil {
			contentChanged = c.Changed()
		}
		children := v.srv.proxy.ContentChanged()
		v.sync()
		v.syncResources()
		v.syncPrompts()
		select {
		case <-snap.Superseded():
		case <-gen.superseded:
			// A reload: the new profile may project other tools.
		case <-children:
		case <-changed:
		case <-contentChanged:
			// The skills were re-read (refresh_skills, fetch_skill, the
			// watcher): clients list resources and tools again, as they
			// did with EVOKORE-MCP, even when no name changed.
			v.resourcesStale = true
			v.sess.Invalidate()
		case <-stop:
			return
		}
	}
}

// left forgets a session that ended.
func (v *View) left() {
	v.srv.detach(v)
	v.srv.proxy.DropSession(v.sess)
	v.ended()
	v.endMu.Lock()
	fns := v.onEnd
	v.onEnd = nil
	v.endMu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
