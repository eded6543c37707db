// Package router runs tools/call: the one pipeline every call flows
// through, whatever the transport and wherever the tool lives.
//
//	resolve → stages, in order → before-dispatch hooks → middleware → dispatch → observers
//
// The stages are an ordered list assembled in one place (the server's
// composition root): quarantine, permission, argument validation,
// approval, rate limit, cooldown. A stage that returns a result or an
// error ends the call with it. What must surround every call that runs
// (in-flight accounting, a trace span) is a Middleware wrapping dispatch,
// in the go-sdk's func(MethodHandler) MethodHandler shape; the first is
// the outermost. The router itself answers a panic in dispatch with an
// internal error for that call alone, and bounds native handlers by
// NativeTimeout. Every call's Outcome, refused or run, goes to the
// observers, in order, before the call returns.
//
// Dispatch goes to a native handler from the generated table, or to a
// Dispatcher: the child supervisor for proxied tools, the plugin host for
// plugin tools.
//
// A caller that can send a result as bytes (a transport answering a
// proxied call itself) sets Call.Raw: the proxy then leaves the child's
// result undecoded, and every stage, middleware and observer runs as for
// any call, observers seeing a stand-in that carries only IsError.
//
// The router holds no state of its own beyond its parts; the catalog,
// supervisor and policy each own theirs.
package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
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
	// Raw, when set by the caller, lets a dispatcher that can leave the
	// tool's result as the bytes the tool sent (see RawResult).
	Raw *RawResult
	// Input is what a client of the sessionless protocol sends back when
	// it retries a call that answered input_required (MCP 2026-07-28):
	// the requestState it was given and its responses to the requests.
	Input *Input
	// Run is the id of the program run (run_code) this call belongs to:
	// the run_code call itself and every call its program makes carry the
	// same id, so records show each inner call under its run. Empty for
	// every other call. StartRun sets it on the run_code call before the
	// program starts; Router.Call sets it on inner calls from their
	// context.
	Run string
	// Task is the task the call runs as (MCP tasks), nil for a call
	// answered directly: a stage that must wait for a person (an
	// approval's decision) holds the task meanwhile instead of refusing
	// the call. Router.Call sets it on inner calls from their context.
	Task Task
	// Bound is what the approval stage bound besides the arguments (a
	// binder's value, such as the code of an execute_skill step). The
	// handler runs the call only if what it is about to run still hashes
	// to it: the approval is checked before the handler reads its own
	// state, and that state may change in between.
	Bound string

	beforeDispatch []func() (*mcp.CallToolResult, error)
	afterDispatch  []func(*mcp.CallToolResult)
	// notes are Note's values: a call has one or two (a map cost more).
	notes []note
}

type note struct{ key, value any }

// Input is a retried call's answer to input_required.
type Input struct {
	State     string
	Responses mcp.InputResponseMap
}

// Note returns the value build makes for key, building it once per call:
// what several observers derive from a call (its decoded, redacted
// arguments) is derived once. Observers run one at a time, so Note needs
// no lock.
func (c *Call) Note(key any, build func() any) any {
	for _, n := range c.notes {
		if n.key == key {
			return n.value
		}
	}
	v := build()
	c.notes = append(c.notes, note{key, v})
	return v
}

// BeforeDispatch registers fn to run once every stage has passed, just
// before the tool runs; a non-nil result or error stops the call. The
// approval stage consumes its token here, so a call a later stage rejects
// does not use up the approval.
func (c *Call) BeforeDispatch(fn func() (*mcp.CallToolResult, error)) {
	c.beforeDispatch = append(c.beforeDispatch, fn)
}

// AfterDispatch registers fn to see the tool's result, and change it,
// before the caller and the observers do, when the tool answered one. The
// approval stage turns a child's input_required after an approval into a
// continuation its retry redeems once.
func (c *Call) AfterDispatch(fn func(*mcp.CallToolResult)) {
	c.afterDispatch = append(c.afterDispatch, fn)
}

// RawResult carries a result as the bytes a child sent: the dispatcher
// fills Bytes and returns Result, a stand-in holding only IsError, which
// is all the pipeline reads. The caller sends Bytes when the pipeline
// returns that very stand-in, and the pipeline's own result otherwise (a
// stage, hook or middleware replaced it).
type RawResult struct {
	Bytes  []byte
	Result *mcp.CallToolResult
}

// Stage inspects a call. A non-nil result or error ends the call with it.
type Stage interface {
	Check(ctx context.Context, c *Call) (*mcp.CallToolResult, error)
}

// StageFunc adapts a function to Stage.
type StageFunc func(ctx context.Context, c *Call) (*mcp.CallToolResult, error)

// Check calls f.
func (f StageFunc) Check(ctx context.Context, c *Call) (*mcp.CallToolResult, error) { return f(ctx, c) }

// Outcome is how one call ended, as observers see it.
type Outcome struct {
	Call   *Call
	Result *mcp.CallToolResult
	// Err is the error the call answers with, already a JSON-RPC error
	// (WireError).
	Err error
	// Refused is true when a stage or a before-dispatch hook ended the
	// call: the tool did not run, and Call.Started is zero.
	Refused bool
}

// Observer sees every call's outcome, refused or run (cooldowns,
// telemetry, metrics, the audit log, session replay). Observers run in
// order before the call is answered, so what they enforce (a cooldown, a
// refund) is in force when the client sends its next call; they must not
// block.
type Observer interface {
	Observe(ctx context.Context, o Outcome)
}

// Dispatcher runs tools that do not live in this process: the child
// supervisor for proxied tools, the plugin host for plugin tools.
type Dispatcher interface {
	CallTool(ctx context.Context, c *Call) (*mcp.CallToolResult, error)
}

// Resolver is asked about a name the catalog lacks before the call is
// refused as unknown: the child supervisor answers for the tools of a
// server that is booting, restarting or down, so a model is told the tool
// is not ready rather than that it does not exist. It returns the entry
// once the tool is there, (nil, nil) for a name that is really unknown, or
// the error to answer with.
type Resolver interface {
	Resolve(ctx context.Context, name string) (*catalog.Entry, error)
}

// Dispatch runs a call that passed every stage.
type Dispatch func(ctx context.Context, c *Call) (*mcp.CallToolResult, error)

// Middleware wraps dispatch: what must surround every call that runs
// (in-flight accounting, a trace span that is current while the tool
// runs).
type Middleware func(next Dispatch) Dispatch

// Options are the router's parts.
type Options struct {
	Catalog *catalog.Store
	Natives *native.Table
	// Proxy and Plugins run proxied and plugin tools; nil refuses them.
	Proxy   Dispatcher
	Plugins Dispatcher
	// Resolver answers for names the catalog lacks; nil takes Proxy when
	// it is one.
	Resolver Resolver
	// Stages run in order; nil entries are skipped.
	Stages []Stage
	// Middleware wraps dispatch, the first outermost; nil entries are
	// skipped.
	Middleware []Middleware
	// NativeTimeout bounds every native handler: one that blocks (a
	// FIFO, a slow disk) ends with its context, and the call answers. A
	// handler that ignores its context keeps its goroutine, but the
	// client is answered. Proxied and plugin calls have their own
	// timeouts. Zero means no bound.
	NativeTimeout time.Duration
	// OnPanic receives the value and stack of a panic in dispatch, which
	// the router answers with a -32603 error for that call alone: one
	// bad input must never take the router and its children down.
	OnPanic func(c *Call, v any, stack []byte)
	// Observers see every call's outcome, in order; nil entries are
	// skipped.
	Observers []Observer
}

// Router is the pipeline and its parts. It is immutable once built.
type Router struct {
	catalog       *catalog.Store
	natives       *native.Table
	proxy         Dispatcher
	plugins       Dispatcher
	resolver      Resolver
	stages        []Stage
	observers     []Observer
	dispatch      Dispatch
	nativeTimeout time.Duration
	onPanic       func(c *Call, v any, stack []byte)
}

// New builds the pipeline.
func New(o Options) *Router {
	r := &Router{catalog: o.Catalog, natives: o.Natives, proxy: o.Proxy, plugins: o.Plugins, resolver: o.Resolver,
		nativeTimeout: o.NativeTimeout, onPanic: o.OnPanic}
	if rs, ok := o.Proxy.(Resolver); ok && r.resolver == nil {
		r.resolver = rs
	}
	for _, st := range o.Stages {
		if st != nil {
			r.stages = append(r.stages, st)
		}
	}
	for _, ob := range o.Observers {
		if ob != nil {
			r.observers = append(r.observers, ob)
		}
	}
	d := Dispatch(r.guarded)
	for i := len(o.Middleware) - 1; i >= 0; i-- {
		if o.Middleware[i] != nil {
			d = o.Middleware[i](d)
		}
	}
	r.dispatch = d
	return r
}

// Call runs one tools/call for a session.
func (r *Router) Call(ctx context.Context, sess *session.Session, params *mcp.CallToolParamsRaw) (*mcp.CallToolResult, error) {
	entry, ok := r.catalog.Snapshot().Lookup(params.Name)
	if !ok && r.resolver != nil {
		e, err := r.resolver.Resolve(ctx, params.Name)
		if err != nil {
			return nil, WireError(err)
		}
		entry, ok = e, e != nil
	}
	if !ok {
		return nil, UnknownTool(params.Name)
	}
	c := &Call{Entry: entry, Session: sess, Args: params.Arguments, Meta: params.Meta, Run: RunOf(ctx), Task: TaskOf(ctx)}
	if params.RequestState != "" || params.InputResponses != nil {
		c.Input = &Input{State: params.RequestState, Responses: params.InputResponses}
	}
	return r.Run(ctx, c)
}

// Run takes a resolved call through the stages, dispatches it and tells
// the observers how it ended.
func (r *Router) Run(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
	if res, err, refused := r.check(ctx, c); refused {
		r.observe(ctx, Outcome{Call: c, Result: res, Err: err, Refused: true})
		return res, err
	}
	c.Started = time.Now()
	res, err := r.dispatch(ctx, c)
	if err == nil && res != nil {
		for _, fn := range c.afterDispatch {
			fn(res)
		}
	}
	err = WireError(err)
	r.observe(ctx, Outcome{Call: c, Result: res, Err: err})
	return res, err
}

// check runs the stages and the before-dispatch hooks; refused is true
// when one of them ended the call, with res and err its answer.
func (r *Router) check(ctx context.Context, c *Call) (res *mcp.CallToolResult, err error, refused bool) {
	for _, st := range r.stages {
		if res, err := st.Check(ctx, c); res != nil || err != nil {
			return res, WireError(err), true
		}
	}
	for _, fn := range c.beforeDispatch {
		if res, err := fn(); res != nil || err != nil {
			return res, WireError(err), true
		}
	}
	return nil, nil, false
}

func (r *Router) observe(ctx context.Context, o Outcome) {
	for _, ob := range r.observers {
		ob.Observe(ctx, o)
	}
}

// guarded is route with a panic answered as an internal error for the
// call alone, and native handlers bounded by nativeTimeout.
func (r *Router) guarded(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
	if r.nativeTimeout <= 0 || c.Entry.Source != catalog.SourceNative {
		return r.recovered(ctx, c)
	}
	ctx, cancel := context.WithTimeout(ctx, r.nativeTimeout)
	defer cancel()
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	// The handler runs on a goroutine of its own (recovered there), so
	// one that ignores its context cannot hold the answer.
	done := make(chan outcome, 1)
	go func() {
		res, err := r.recovered(ctx, c)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
		if ctx.Err() == context.DeadlineExceeded {
			return native.Errorf("%s did not finish within %s", c.Entry.Name, r.nativeTimeout), nil
		}
		return nil, ctx.Err()
	}
}

// recovered is route with a panic answered as an internal error.
func (r *Router) recovered(ctx context.Context, c *Call) (res *mcp.CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, r.panicked(c, v)
		}
	}()
	return r.route(ctx, c)
}

// panicked reports a panic in c's dispatch and returns its answer.
func (r *Router) panicked(c *Call, v any) error {
	if r.onPanic != nil {
		r.onPanic(c, v, debug.Stack())
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("internal error in %s", c.Entry.Name)}
}

// route sends a call to where its tool lives.
func (r *Router) route(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
	switch c.Entry.Source {
	case catalog.SourceProxy:
		if r.proxy == nil {
			return nil, MethodNotFound("Tool not found in proxy registry: " + c.Entry.Name)
		}
		return r.proxy.CallTool(ctx, c)
	case catalog.SourcePlugin:
		if r.plugins == nil {
			return nil, UnknownTool(c.Entry.Name)
		}
		return r.plugins.CallTool(ctx, c)
	}
	if r.natives == nil {
		return nil, UnknownTool(c.Entry.Name)
	}
	h, ok := r.natives.Handler(c.Entry.Name)
	if !ok {
		return nil, UnknownTool(c.Entry.Name)
	}
	spec, _ := native.Lookup(c.Entry.Name)
	ctx = context.WithValue(ctx, callKey{}, c)
	return h(ctx, &native.Call{Spec: spec, Args: c.Args, Session: c.Session, Meta: c.Meta, Bound: c.Bound})
}

type (
	callKey struct{}
	runKey  struct{}
	taskKey struct{}
)

// Task is what a stage sees of the task a call runs as.
type Task interface {
	// ID is the task's id.
	ID() string
	// Hold marks the task as waiting for a person's decision (why says
	// what it waits for) until the function returned is called.
	Hold(why string) (resume func())
}

// WithTask returns ctx for a call that runs as task t: the calls made on
// it (a program's) run as the same task.
func WithTask(ctx context.Context, t Task) context.Context {
	return context.WithValue(ctx, taskKey{}, t)
}

// TaskOf returns the task a call made on ctx runs as, nil for none.
func TaskOf(ctx context.Context) Task {
	t, _ := ctx.Value(taskKey{}).(Task)
	return t
}

// StartRun marks the native call running on ctx as a program run with id,
// and returns the context its program's calls are made with: Router.Call
// gives each of them the same Run. It must be called before the first
// inner call, from the handler's own goroutine.
func StartRun(ctx context.Context, id string) context.Context {
	if c, ok := ctx.Value(callKey{}).(*Call); ok {
		c.Run = id
	}
	return context.WithValue(ctx, runKey{}, id)
}

// RunOf returns the program run a call made on ctx belongs to, "" for
// none.
func RunOf(ctx context.Context) string {
	id, _ := ctx.Value(runKey{}).(string)
	return id
}

type approvalWaitKey struct{}

// WithApprovalWaits returns ctx whose calls tell fn when they start
// waiting for a human's decision on an approval (waiting true) and when
// they stop (decided, or ctx ended). A program run uses it to say, when
// its time runs out, which approvals it was waiting for.
func WithApprovalWaits(ctx context.Context, fn func(tool, approvalID string, waiting bool)) context.Context {
	return context.WithValue(ctx, approvalWaitKey{}, fn)
}

// ApprovalWait tells the observer WithApprovalWaits set on ctx, if any,
// that the call of tool waits (or no longer waits) for approvalID.
func ApprovalWait(ctx context.Context, tool, approvalID string, waiting bool) {
	if fn, ok := ctx.Value(approvalWaitKey{}).(func(string, string, bool)); ok {
		fn(tool, approvalID, waiting)
	}
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
