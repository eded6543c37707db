package ingress

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/session"
)

// Router is the router as a client transport sees it: it builds the views
// that serve clients on the SDK path and takes what the byte path carries.
// Package server implements it; the transports declare nothing else they
// need of it.
type Router interface {
	// Open builds the view of a session acting as so. It starts the
	// router's background work, once, and connects nothing: the session's
	// id is its transport's (View.Connect), or the one the go-sdk's
	// streamable handler gives a session it builds itself.
	Open(so SessionOptions) View
	// Sessionless builds the view one request of a client without a
	// session (MCP 2026-07-28) is served by, acting as so. Such a client
	// declares no capabilities up front: the children boot, once, without
	// them. Its MCP server is built only when asked for.
	Sessionless(so SessionOptions) View
	// Take is the byte path's rule (see the package doc): the call that m
	// is, sent by v's client and delivered as via says, or false to leave
	// m to the SDK path. It must not block: the work is the Call's.
	Take(v View, m Message, via Via) (Call, bool)
	// StartChildren boots the child servers, once, offering them the
	// client capabilities caps.
	StartChildren(caps *mcp.ClientCapabilities)
	// InputSchema is the input schema clients are shown for the tool
	// they call by name, and whether a client without a session finds it
	// in tools/list; ok is false when no tool has that name, and schema
	// is nil for a child's tool that annotates no argument.
	InputSchema(name string) (schema any, listed, ok bool)
	// Closing reports whether the router is shutting down.
	Closing() bool
	// OnShutdown registers fn to run when the router shuts down, after
	// the calls in flight ended and before the sessions close: a
	// transport finishes writing its answers there.
	OnShutdown(fn func(context.Context))
}

// View is one client's window on the router: its session, and the
// mcp.Server that serves it on the SDK path (so that a list change
// reaches this client only).
type View interface {
	// MCP is the view's own MCP server.
	MCP() *mcp.Server
	// Session is the router's session the view serves.
	Session() *session.Session
	// Connect serves the view over t, from state when it is not nil (a
	// session resumed from its saved state: the SDK's session starts
	// initialised, no initialize is played to it). A transport that
	// builds its sessions itself (the go-sdk's streamable handler) serves
	// MCP() instead; the view then binds on its first request.
	Connect(ctx context.Context, t mcp.Transport, state *mcp.ServerSessionState) (*mcp.ServerSession, error)
	// InitializeParams are what the client sent in its initialize, or
	// what its saved state holds; nil before either.
	InitializeParams() *mcp.InitializeParams
	// OnEnd registers fn to run once when the view's session ends.
	OnEnd(fn func())
	// Close ends the view's session.
	Close()
}

// SessionOptions say who a session acts for; the zero value is the
// router's role and no identity (stdio).
type SessionOptions struct {
	// Role overrides the router's role when set.
	Role     string
	Identity session.Identity
	// Inbound is the bearer token the request was authenticated with,
	// when it named a subject (session.Session.SetInbound); never
	// logged or stored.
	Inbound string
}

// Call is a call the byte path carries, ready to run.
type Call interface {
	// Run runs the call through the router. The answer is raw, the
	// result's bytes as the client gets them, when not nil; else res, or
	// err (a JSON-RPC error).
	Run(ctx context.Context) (res *mcp.CallToolResult, raw []byte, err error)
}

// Via is what a transport's byte path delivers of a call besides its
// answer, and so which members of its _meta a call it carries may hold:
// the trace context always (traceparent, tracestate).
type Via struct {
	// Progress is set when the call's progress notifications reach the
	// client (stdio writes them to the stream the answer goes to; an HTTP
	// POST answered by the byte path has no stream for them).
	Progress bool
	// Sessionless is set for a request of a client without a session (MCP
	// 2026-07-28), whose _meta carries its protocol version, client
	// capabilities and client information.
	Sessionless bool
	// Notify, when set, sends the client a notification outside any
	// request, for as long as its connection lasts (stdio); nil where the
	// transport has no stream for one.
	Notify func(method string, params []byte) error
}

// Delivers reports whether a call carried this way may hold the _meta
// member key.
func (v Via) Delivers(key string) bool {
	switch key {
	case "traceparent", "tracestate":
		return true
	case "progressToken":
		return v.Progress
	case mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities, mcp.MetaKeyClientInfo:
		return v.Sessionless
	}
	return false
}
