package server

//lint:file-ignore SA1019 sampling, roots and logging pass through on purpose; see docs/decisions.md

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/events"
	"github.com/evokore/evokore/internal/logging"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/tracing"
)

// view is one client session's window on the router: its own mcp.Server,
// so that tools/list_changed reaches this session only.
//
// Building a view is separate from connecting it: Connect binds it to a
// transport at once, while the streamable HTTP handler builds one per new
// session and connects it itself; the view binds to its ServerSession on
// the first request either way.
//
// tools/list and tools/call never reach the SDK's own tool registry: the
// middleware answers them from the catalog (in catalog order, hidden tools
// callable by name). The view keeps the names this session can see, and
// changing the registry is how the SDK notifies a session: the registry
// holds one placeholder tool, replaced whenever what the session sees
// changed. (One entry per visible tool cost two 32 KiB JSON decoders in
// the SDK's AddTool for each tool, 37 of them before the first handshake:
// see docs/decisions.md, "Startup".)
type view struct {
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

	bindOnce sync.Once
	bound    bool
	// answered is closed once the session's first request was handled:
	// keeping the mirror current starts then, not during the handshake.
	answered     chan struct{}
	answeredOnce sync.Once
	ss           *mcp.ServerSession

	// http is set for a session served over streamable HTTP: it keeps
	// the session's record in the session store. pinnedID is the id a
	// resumed session must keep.
	http     *httpSessions
	pinnedID string
	saved    savedState
	// started is set once session_start was recorded, so session_end is
	// recorded for exactly the sessions that started.
	started atomic.Bool
}

// mirrorTool is the registry's placeholder: replacing it makes the SDK
// send tools/list_changed (debounced, so a burst of changes is one
// notification). Clients never see it: tools/list and tools/call are
// answered by the middleware.
var mirrorTool = mcp.Tool{Name: "evokore_tools_changed", InputSchema: json.RawMessage(`{"type":"object"}`)}

// newView builds a session's view; it starts nothing and connects nothing.
func (s *Server) newView(so SessionOptions) *view {
	v := &view{srv: s, mirrored: map[string]string{}, mirroredRes: map[string]bool{}, mirroredPrompts: map[string]bool{},
		answered: make(chan struct{})}
	role := so.Role
	if role == "" {
		role = s.gen.Load().role
	}
	v.sess = session.New("", role)
	v.sess.Identity = so.Identity
	v.sess.TTL = s.opts.Settings.SessionTTL
	opts := identity()
	opts.Logger = logging.AtLeast(s.log, slog.LevelWarn)
	opts.SubscribeHandler = func(ctx context.Context, req *mcp.SubscribeRequest) error { return v.subscribe(ctx, req) }
	opts.UnsubscribeHandler = func(ctx context.Context, req *mcp.UnsubscribeRequest) error { return v.unsubscribe(ctx, req) }
	opts.CompletionHandler = func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		return v.complete(ctx, req)
	}
	opts.InitializedHandler = func(_ context.Context, req *mcp.InitializedRequest) {
		var caps *mcp.ClientCapabilities
		if ip := req.Session.InitializeParams(); ip != nil {
			caps = ip.Capabilities
		}
		s.proxy.Start(caps)
		client := ""
		if ip := req.Session.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			client = ip.ClientInfo.Name
		}
		if v.started.CompareAndSwap(false, true) {
			s.sessionEvent(events.SessionStart, v.sess, client)
		}
	}
	opts.GetSessionID = func() string {
		if v.pinnedID != "" {
			return v.pinnedID
		}
		return rand.Text()
	}
	v.mcp = mcp.NewServer(&mcp.Implementation{Name: serverName, Version: s.opts.Version}, opts)
	v.mcp.AddReceivingMiddleware(v.middleware)
	// Resources are mirrored by watch, after the handshake: reading them
	// waits for the first skills index, which the handshake must not.
	v.sync()
	return v
}

// bind ties the view to its connected session, registers it with the
// server and starts keeping its mirror current. It reports false when the
// server is shutting down; the session must then be closed.
func (v *view) bind(ss *mcp.ServerSession) bool {
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
		if v.http != nil {
			v.http.add(v)
		}
		v.srv.goBackground(func() { v.watch(ss) })
	})
	return v.bound
}

// answer records that the session's first request was handled: the
// view's watch may begin, and so may the server's deferred work.
func (v *view) answer() {
	v.answeredOnce.Do(func() {
		close(v.answered)
		v.srv.handshook()
	})
}

// close ends the view's session.
func (v *view) close() {
	if v.ss != nil {
		_ = v.ss.Close()
	}
	// Recorded here too: at shutdown the records close before the watcher
	// would notice.
	v.ended()
}

// ended records session_end once for a session that started.
func (v *view) ended() {
	if v.started.CompareAndSwap(true, false) {
		v.srv.sessionEvent(events.SessionEnd, v.sess, "")
	}
}

func (v *view) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "server/discover" {
			// A streamable HTTP client asks this on a throwaway session
			// before it initialises: it is no session of the router's.
			// Over stdio, a client that discovered the server speaks the
			// stateless protocol (2026-07-28, the go-sdk client's default)
			// and sends no initialize: the children boot now, or nothing
			// would boot them, and without client capabilities, which
			// such a client does not declare up front (no roots,
			// sampling or elicitation is offered to them).
			res, err := next(ctx, method, req)
			if err == nil && v.http == nil {
				v.srv.proxy.Start(nil)
			}
			return res, err
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && !v.bind(ss) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "evokore is shutting down"}
		}
		// Background work waits for the first answer: the handshake is
		// what a client waits on at start (docs/decisions.md, "Startup").
		defer v.answer()
		v.sess.Touch()
		if method == "initialize" && v.http != nil {
			// Saved once the client's parameters are known and before the
			// answer leaves, so the session's next request finds it on
			// any replica.
			res, err := next(ctx, method, req)
			if err == nil {
				v.http.save(ctx, v)
				// Behind a round-robin proxy the session's initialized
				// notification may reach another replica: this one would
				// then never boot its children, and its calls would wait
				// for them. Over HTTP they boot once the initialize is
				// answered (and a resume replays one).
				var caps *mcp.ClientCapabilities
				if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil {
					caps = p.Capabilities
				}
				v.srv.proxy.Start(caps)
			}
			return res, err
		}
		switch method {
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
			if v.http != nil {
				// Saved before the answer leaves, so that the session's
				// next request finds its activations on any replica.
				v.http.saveIfChanged(ctx, v)
			}
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
func (v *view) sync() {
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
func (v *view) watch(ss *mcp.ServerSession) {
	done := make(chan struct{})
	go func() {
		_ = ss.Wait()
		close(done)
	}()
	var contentChanged <-chan struct{}
	// The mirror newView set stays until the first answer: syncing
	// resources and prompts builds the skills index, which the handshake
	// must not wait behind.
	select {
	case <-v.answered:
	case <-done:
		v.left()
		return
	}
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
		case <-done:
			v.left()
			return
		}
	}
}

// left forgets a session that ended.
func (v *view) left() {
	v.srv.detach(v)
	v.srv.proxy.DropSession(v.sess)
	if v.http != nil {
		v.http.remove(v)
	}
	v.ended()
}
