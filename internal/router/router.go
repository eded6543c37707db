// Package router runs tools/call: the one pipeline every call flows
// through, whatever the transport and wherever the tool lives.
//
//	resolve → permission → validate → approval → rate limit → cooldown → dispatch
//
// Each policy stage is an interface the policy package fills; a nil stage
// lets every call pass. Dispatch goes to a native handler from the
// generated table, or to the child supervisor.
//
// The router holds no state of its own beyond its parts; the catalog,
// supervisor and policy each own theirs.
package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/session"
)

// Call is one tools/call on its way through the pipeline. Stages may
// rewrite Args (the approval stage strips its token) and register hooks
// that run just before dispatch.
type Call struct {
	Entry   *catalog.Entry
	Session *session.Session
	Args    json.RawMessage
	Meta    mcp.Meta
	// Started is when the call was dispatched; observers measure latency
	// from it.
	Started time.Time
	// NeedsApproval is set by the permission stage when the tool's level
	// is require_approval; the approval stage acts on it.
	NeedsApproval bool

	beforeDispatch []func() (*mcp.CallToolResult, error)
}

// BeforeDispatch registers fn to run once every stage has passed, just
// before the tool runs; a non-nil result or error stops the call. The
// approval stage consumes its token here, so a call a later stage rejects
// does not use up the approval.
func (c *Call) BeforeDispatch(fn func() (*mcp.CallToolResult, error)) {
	c.beforeDispatch = append(c.beforeDispatch, fn)
}

// Stage inspects a call. A non-nil result or error ends the call with it.
type Stage interface {
	Check(ctx context.Context, c *Call) (*mcp.CallToolResult, error)
}

// Observer sees every dispatched call's outcome (cooldown, telemetry).
type Observer interface {
	Observe(ctx context.Context, c *Call, res *mcp.CallToolResult, err error)
}

// Dispatcher runs tools that do not live in this process: the child
// supervisor for proxied tools, the plugin host for plugin tools.
type Dispatcher interface {
	CallTool(ctx context.Context, c *Call) (*mcp.CallToolResult, error)
}

// Router is the pipeline and its parts.
type Router struct {
	Catalog *catalog.Store
	Natives *native.Table
	Proxy   Dispatcher
	Plugins Dispatcher

	Permission Stage
	Approval   Stage
	RateLimit  Stage
	Cooldown   Stage
	Observers  []Observer
}

// Call runs one tools/call for a session.
func (r *Router) Call(ctx context.Context, sess *session.Session, params *mcp.CallToolParamsRaw) (*mcp.CallToolResult, error) {
	entry, ok := r.Catalog.Snapshot().Lookup(params.Name)
	if !ok {
		return nil, UnknownTool(params.Name)
	}
	c := &Call{Entry: entry, Session: sess, Args: params.Arguments, Meta: params.Meta}
	return r.Run(ctx, c)
}

// Run takes a resolved call through the stages and dispatches it.
func (r *Router) Run(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
	if q := c.Entry.Quarantine; q != "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: q}
	}
	if res, err := check(ctx, r.Permission, c); res != nil || err != nil {
		return res, err
	}
	if problems := c.Entry.Validate(c.Args); problems != nil {
		return invalidArguments(c.Entry.Name, problems), nil
	}
	for _, st := range []Stage{r.Approval, r.RateLimit, r.Cooldown} {
		if res, err := check(ctx, st, c); res != nil || err != nil {
			return res, err
		}
	}
	for _, fn := range c.beforeDispatch {
		if res, err := fn(); res != nil || err != nil {
			return res, err
		}
	}
	c.Started = time.Now()
	res, err := r.dispatch(ctx, c)
	err = WireError(err)
	for _, o := range r.Observers {
		o.Observe(ctx, c, res, err)
	}
	return res, err
}

func check(ctx context.Context, st Stage, c *Call) (*mcp.CallToolResult, error) {
	if st == nil {
		return nil, nil
	}
	res, err := st.Check(ctx, c)
	return res, WireError(err)
}

func (r *Router) dispatch(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
	switch c.Entry.Source {
	case catalog.SourceProxy:
		if r.Proxy == nil {
			return nil, MethodNotFound("Tool not found in proxy registry: " + c.Entry.Name)
		}
		return r.Proxy.CallTool(ctx, c)
	case catalog.SourcePlugin:
		if r.Plugins == nil {
			return nil, UnknownTool(c.Entry.Name)
		}
		return r.Plugins.CallTool(ctx, c)
	}
	h, ok := r.Natives.Handler(c.Entry.Name)
	if !ok {
		return nil, UnknownTool(c.Entry.Name)
	}
	spec, _ := native.Lookup(c.Entry.Name)
	return h(ctx, &native.Call{Spec: spec, Args: c.Args, Session: c.Session, Meta: c.Meta})
}

// invalidArguments lists every violation so the model can fix them all in
// one retry.
func invalidArguments(tool string, problems []string) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "Invalid arguments for '%s':", tool)
	for _, p := range problems {
		b.WriteString("\n- ")
		b.WriteString(p)
	}
	return native.Errorf("%s", b.String())
}

// WireError makes sure an error reaches the client with a real JSON-RPC
// code: the SDK sends a plain Go error with code 0.
func WireError(err error) error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		if we.Code == jsonrpc.CodeMethodNotFound {
			return MethodNotFound(we.Message)
		}
		return we
	}
	if errors.Is(err, context.Canceled) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "request cancelled"}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// UnknownTool is the error for a name no tool has: -32601 with
// EVOKORE-MCP's text.
func UnknownTool(name string) error { return MethodNotFound("Unknown tool: " + name) }

// MethodNotFound is a -32601 error whose message reaches the client as
// written. The SDK rewrites any error that matches its own method-not-found
// sentinel (same code) to "method not found: <method>", which would hide
// which tool was unknown; this type carries the code without matching it.
func MethodNotFound(msg string) error {
	return &methodNotFound{&jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: msg}}
}

type methodNotFound struct{ wire *jsonrpc.Error }

func (e *methodNotFound) Error() string { return e.wire.Message }

// As lets the SDK find the wire error's code without errors.Is matching it.
func (e *methodNotFound) As(target any) bool {
	if p, ok := target.(**jsonrpc.Error); ok {
		*p = e.wire
		return true
	}
	return false
}
