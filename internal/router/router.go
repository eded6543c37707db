// Package router runs tools/call: the one pipeline every call flows
// through, whatever the transport and wherever the tool lives.
//
//	resolve → stages, in order → before-dispatch hooks → around → middleware → dispatch → observers
//
// The stages are an ordered list assembled in one place (the server's
// composition root): quarantine, permission, argument validation,
// approval, rate limit, cooldown. A stage that returns a result or an
// error ends the call with it. What must surround every call that runs
// (in-flight accounting, a trace span) is an Around, in two halves, or a
// Middleware wrapping dispatch in the go-sdk's
// func(MethodHandler) MethodHandler shape; the first of each is the
// outermost. The router itself answers a panic in dispatch with an
// internal error for that call alone, and bounds native handlers by
// NativeTimeout.
//
// Dispatch goes to a native handler from the generated table, or to a
// Dispatcher: the child supervisor for proxied tools, the plugin host for
// plugin tools.
//
// A caller that can send a result as bytes (the stdio fast path for
// proxied calls) sets Call.Raw: the proxy then leaves the child's result
// undecoded and every stage, hook, middleware and observer runs as for
// any call, observers seeing a stand-in that carries only IsError.
//
// Such a caller may also not wait: Start runs a call up to dispatch on
// the caller's goroutine and, when the dispatcher is a Starter (the proxy,
// for a child that is connected) and no Middleware is set, returns as
// soon as the request is with the child. The rest (the Around exits,
// observers, delivery, recorders) runs on whichever goroutine the outcome
// arrives on: the child's reader, a timer, a cancellation. No goroutine
// sits waiting for a child's answer, and none is woken to pass it on.
//
// The router holds no state of its own beyond its parts; the catalog,
// supervisor and policy each own theirs.
package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/rawjson"
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
	// Waiting, when set by the caller, is called at most once by the
	// dispatcher when the call has nothing left to do but wait for its
	// tool: a proxied call's request is written to its child. The stdio
	// fast path moves its reading to another goroutine then (see
	// stdio.FastPath).
	Waiting func()
	// Deliver, when set by the caller, sends the call's answer. Run calls
	// it once, after the observers and before the recorders, so what
	// only records a call (the audit log, the session replay) never adds
	// to the time a client waits for its answer.
	Deliver func(*mcp.CallToolResult, error)

	beforeDispatch []func() (*mcp.CallToolResult, error)
	// notes are Note's values: a call has one or two (a map cost more).
	notes []note
	// text and textOf are ResultText's last answer and the result it is
	// for.
	text   string
	textOf *mcp.CallToolResult
}

type note struct{ key, value any }

// Note returns the value build makes for key, building it once per call:
// what several observers derive from a call (its decoded, redacted
// arguments) is derived once. Observers and recorders run one at a time,
// so Note needs no lock.
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

// RawResult carries a result as the bytes a child sent, for the proxy's
// fast path: the dispatcher fills Bytes and returns Result, a stand-in
// holding only IsError, which is all observers read. The caller sends
// Bytes when the pipeline returns that very stand-in, and the pipeline's
// own result otherwise (a stage, hook or middleware replaced it).
type RawResult struct {
	Bytes  []byte
	Result *mcp.CallToolResult
}

// maxRawText bounds the fast-path results ResultText decodes: beyond it
// the records say how big the answer was instead of decoding megabytes.
const maxRawText = 64 << 10

// ResultText joins the text blocks of res, the call's result, for the
// records (replay, audit). A fast-path result is read from its bytes,
// decoded only here and only when small.
func (c *Call) ResultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	// The audit log and the session replay both ask, one after the
	// other (records run one at a time, as Note's do).
	if res != c.textOf {
		c.text, c.textOf = c.resultText(res), res
	}
	return c.text
}

func (c *Call) resultText(res *mcp.CallToolResult) string {
	if c.Raw != nil && res == c.Raw.Result && c.Raw.Bytes != nil {
		if len(c.Raw.Bytes) > maxRawText {
			return fmt.Sprintf("[%d bytes of result not recorded]", len(c.Raw.Bytes))
		}
		if text, ok := rawText(c.Raw.Bytes); ok {
			return text
		}
		var raw struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(c.Raw.Bytes, &raw) != nil {
			return ""
		}
		var parts []string
		for _, b := range raw.Content {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	var parts []string
	for _, b := range res.Content {
		if t, ok := b.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// rawText reads the text blocks of a result's bytes in place (the proxy
// checked them: they are valid JSON), as the decoding into a struct
// after it would, for the shape every tool answers with: a content array
// of objects whose type and text are strings. ok is false for anything
// else (a member name in another case, which decoding also matches, a
// repeated one, a null, a type decoding refuses), left to the decoding.
func rawText(result []byte) (text string, ok bool) {
	var content []byte
	ok = true
	if rawjson.RawMembers(result, func(tok, v []byte) bool {
		switch k := rawjson.Name(tok); {
		case string(k) == "content" && content == nil:
			content = v
		case bytes.EqualFold(k, []byte("content")):
			ok = false
		}
		return ok
	}) != nil || !ok || content == nil {
		return "", false
	}
	var parts []string
	if rawjson.Elements(content, func(block []byte) bool {
		var typ, txt []byte
		if rawjson.RawMembers(block, func(tok, v []byte) bool {
			switch k := rawjson.Name(tok); {
			case string(k) == "type" && typ == nil:
				typ = v
			case string(k) == "text" && txt == nil:
				txt = v
			case bytes.EqualFold(k, []byte("type")) || bytes.EqualFold(k, []byte("text")):
				ok = false
			}
			return ok
		}) != nil || !ok {
			ok = false
			return false
		}
		t, tOK := rawString(typ)
		x, xOK := rawString(txt)
		if ok = tOK && xOK; ok && t == "text" {
			parts = append(parts, x)
		}
		return ok
	}) != nil || !ok {
		return "", false
	}
	return strings.Join(parts, "\n"), true
}

// rawString is a block's member as decoding into a string field reads
// it: absent and null are empty. ok is false for another type, and for
// text that is not UTF-8, which decoding would repair byte by byte.
func rawString(v []byte) (string, bool) {
	if v == nil || string(v) == "null" {
		return "", true
	}
	s, ok := rawjson.String(v)
	if !ok {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return s, utf8.ValidString(s)
		}
	}
	return s, true
}

// Stage inspects a call. A non-nil result or error ends the call with it.
type Stage interface {
	Check(ctx context.Context, c *Call) (*mcp.CallToolResult, error)
}

// StageFunc adapts a function to Stage.
type StageFunc func(ctx context.Context, c *Call) (*mcp.CallToolResult, error)

// Check calls f.
func (f StageFunc) Check(ctx context.Context, c *Call) (*mcp.CallToolResult, error) { return f(ctx, c) }

// Observer sees every dispatched call's outcome (cooldown, telemetry).
type Observer interface {
	Observe(ctx context.Context, c *Call, res *mcp.CallToolResult, err error)
}

// RefusalObserver is an Observer that also sees the calls a stage ended
// before they ran (a denial, an approval interception, a rate limit), for
// records that must show every call: the audit log, session replay.
type RefusalObserver interface {
	Refused(ctx context.Context, c *Call, res *mcp.CallToolResult, err error)
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
// and needs the call's own goroutine around it (a trace span that is
// current while the tool runs). A router with Middleware runs every call
// synchronously (see Start).
type Middleware func(next Dispatch) Dispatch

// Around surrounds every call that runs, in two halves: it is called
// before dispatch and returns the context dispatch runs under and exit,
// which sees the outcome once it is known, on whichever goroutine that
// is. Neither half may block. In-flight accounting is an Around, so it
// holds for calls that finish without a goroutine waiting (see Start).
type Around func(ctx context.Context, c *Call) (context.Context, func(*mcp.CallToolResult, error))

// Starter is a Dispatcher that can dispatch a call without waiting for
// its outcome. StartCall either returns false, having started nothing (the
// call is then dispatched through CallTool), or returns true and calls
// done exactly once with the outcome, from any goroutine, possibly before
// StartCall returns. It should return without waiting: it runs on the
// goroutine that reads the client's requests.
type Starter interface {
	StartCall(ctx context.Context, c *Call, done func(*mcp.CallToolResult, error)) bool
}

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
	// Around surrounds dispatch, outside Middleware, the first
	// outermost.
	Around []Around
	// Middleware wraps dispatch, the first outermost.
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
	// Observers see every dispatched call's outcome, in order, before
	// its answer is delivered (cooldowns and refunds must be in force
	// when the client sends its next call).
	Observers []Observer
	// Recorders see every call after its answer is delivered (see
	// Call.Deliver); they only record. A RefusalObserver among them sees
	// refused calls too.
	Recorders []Observer
}

// Router is the pipeline and its parts. It is immutable once built.
type Router struct {
	catalog   *catalog.Store
	natives   *native.Table
	proxy     Dispatcher
	plugins   Dispatcher
	resolver  Resolver
	stages    []Stage
	around    []Around
	observers []Observer
	recorders []Observer
	dispatch  Dispatch
	// starter is the proxy when it is a Starter and no Middleware needs
	// a call's goroutine; nil runs every call synchronously.
	starter       Starter
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
	for _, ob := range o.Recorders {
		if ob != nil {
			r.recorders = append(r.recorders, ob)
		}
	}
	for _, a := range o.Around {
		if a != nil {
			r.around = append(r.around, a)
		}
	}
	d := Dispatch(r.guarded)
	wrapped := false
	for i := len(o.Middleware) - 1; i >= 0; i-- {
		if o.Middleware[i] != nil {
			d = o.Middleware[i](d)
			wrapped = true
		}
	}
	r.dispatch = d
	if st, ok := o.Proxy.(Starter); ok && !wrapped {
		r.starter = st
	}
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
	c := &Call{Entry: entry, Session: sess, Args: params.Arguments, Meta: params.Meta}
	return r.Run(ctx, c)
}

// Run takes a resolved call through the stages and dispatches it.
func (r *Router) Run(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
	if res, err, refused := r.check(ctx, c); refused {
		return r.refused(ctx, c, res, err)
	}
	c.Started = time.Now()
	dctx, exit := r.enter(ctx, c)
	res, err := r.dispatch(dctx, c)
	exit(res, err)
	return r.finish(ctx, c, res, err)
}

// Start is Run for a caller that does not wait for the outcome: the call
// is delivered through c.Deliver, and ended is called once everything Run
// would have done is done. When the tool's dispatcher is a Starter and
// takes the call, Start returns as soon as it is started, and the rest
// runs on the goroutine its outcome arrives on; otherwise Start is Run
// followed by ended.
func (r *Router) Start(ctx context.Context, c *Call, ended func()) {
	if r.starter == nil || c.Entry.Source != catalog.SourceProxy {
		_, _ = r.Run(ctx, c)
		ended()
		return
	}
	if res, err, refused := r.check(ctx, c); refused {
		_, _ = r.refused(ctx, c, res, err)
		ended()
		return
	}
	c.Started = time.Now()
	dctx, exit := r.enter(ctx, c)
	var finished atomic.Bool
	done := func(res *mcp.CallToolResult, err error) {
		if !finished.CompareAndSwap(false, true) {
			return // a Starter that panicked after taking the call
		}
		exit(res, err)
		_, _ = r.finish(ctx, c, res, err)
		ended()
	}
	if r.start(dctx, c, done) {
		return
	}
	done(r.dispatch(dctx, c))
}

// start offers c to the Starter; a panic in it ends the call as a panic
// in dispatch does.
func (r *Router) start(ctx context.Context, c *Call, done func(*mcp.CallToolResult, error)) (started bool) {
	defer func() {
		if v := recover(); v != nil {
			done(nil, r.panicked(c, v))
			started = true
		}
	}()
	return r.starter.StartCall(ctx, c, done)
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

// enter runs the first halves of the Arounds and returns the context
// dispatch runs under and the function that runs their second halves,
// innermost first.
func (r *Router) enter(ctx context.Context, c *Call) (context.Context, func(*mcp.CallToolResult, error)) {
	switch len(r.around) {
	case 0:
		return ctx, func(*mcp.CallToolResult, error) {}
	case 1:
		return r.around[0](ctx, c)
	}
	exits := make([]func(*mcp.CallToolResult, error), len(r.around))
	for i, a := range r.around {
		ctx, exits[i] = a(ctx, c)
	}
	return ctx, func(res *mcp.CallToolResult, err error) {
		for i := len(exits) - 1; i >= 0; i-- {
			exits[i](res, err)
		}
	}
}

// finish runs what follows dispatch: the observers, delivery of the
// answer, the recorders.
func (r *Router) finish(ctx context.Context, c *Call, res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	err = WireError(err)
	for _, o := range r.observers {
		o.Observe(ctx, c, res, err)
	}
	c.deliver(res, err)
	for _, o := range r.recorders {
		o.Observe(ctx, c, res, err)
	}
	return res, err
}

// refused tells the refusal observers about a call a stage ended.
func (r *Router) refused(ctx context.Context, c *Call, res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	for _, o := range r.observers {
		if ro, ok := o.(RefusalObserver); ok {
			ro.Refused(ctx, c, res, err)
		}
	}
	c.deliver(res, err)
	for _, o := range r.recorders {
		if ro, ok := o.(RefusalObserver); ok {
			ro.Refused(ctx, c, res, err)
		}
	}
	return res, err
}

// deliver sends the answer through Deliver, once.
func (c *Call) deliver(res *mcp.CallToolResult, err error) {
	if d := c.Deliver; d != nil {
		c.Deliver = nil
		d(res, err)
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
	return h(ctx, &native.Call{Spec: spec, Args: c.Args, Session: c.Session, Meta: c.Meta})
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
