package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/childauth"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/tracing"
)

// CallTool forwards a proxied call to its child, implementing
// router.Dispatcher. It waits for a child that is still booting, bounds
// the call by the request timeout, passes progress through and reports
// the child's failures as results the model can read. An error the child
// itself returned keeps its JSON-RPC code.
//
// What the call means is read here and in the era adapter (era.go); the
// connection's carrier only takes it to the child and back.
func (s *Supervisor) CallTool(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	ch, ok := s.child(c.Entry.Server)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Tool not found in proxy registry: " + c.Entry.Name}
	}
	if !ch.enter() {
		// A reload took the server out between the lookup and here.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: MsgServerRemoved(c.Entry.Name, ch.spec.ID)}
	}
	defer ch.leave()
	release := func() {}
	var in *instance
	if refusal := childauth.CallerRefusal(ch.spec, c.Session); refusal != "" {
		return errorResult(refusal), nil
	}
	if ch.spec.PerCaller() {
		roots, ask, err := s.startRoots(ch, c)
		if err != nil || ask != nil {
			return ask, err
		}
		var refusal string
		if in, release, refusal = s.instanceFor(ch, c, roots); refusal != "" {
			return errorResult(refusal), nil
		}
		ch = in.c
		ch.awaitRestart(ctx)
	}
	// A call held for its caller's retry releases its instance when it
	// ends, not when this request does (held.go).
	defer func() { release() }()
	// A child that needs authorization asks this call's client.
	ctx = childauth.WithCaller(ctx, c.Session)
	k, err := ch.connFor(ctx, c.Session)
	if err != nil {
		return authFailure(err)
	}
	if in != nil {
		if held := in.heldByTemplate(c.Entry.Original); held != "" {
			return errorResult(held), nil
		}
	}
	binding, err := k.binding(c)
	if err != nil {
		return errorResult(fmt.Sprintf("evokore cannot pass the answers of '%s' on: %v", c.Entry.Name, err)), nil
	}
	what := func() string { return "'" + c.Entry.Name + "'" }
	responses, state, err := s.openInput(c.Input, ch.spec.ID, binding, what)
	if err != nil {
		return nil, err
	}
	if res, ok, err := s.resumeHeld(ctx, c, state, responses, ch.spec.ID, binding, what); ok {
		return res, err
	}
	if state == rootsState {
		// The answer started the instance (startRoots): the child
		// itself asked nothing.
		responses, state = nil, ""
	}
	t := toolCall{ch: ch, k: k, c: c, timeout: s.requestTimeout(ch.spec)}
	t.req = toolRequest{name: c.Entry.Original, args: callArgs(c.Args), meta: requestMeta(k, c.Session, c.Meta), deadline: time.Now().Add(t.timeout)}
	if ttl, ok := t.taskTTL(); ok {
		// The child's own task (childtask.go): a router task's lasts
		// as long as the router task may.
		t.req.taskTTL = ttl
		t.req.deadline = time.Now().Add(ttl)
	}
	if tp, ts := tracing.Inject(ctx, c.Meta); tp != "" {
		t.req.meta = put(put(t.req.meta, "traceparent", tp), "tracestate", ts)
	}
	if holds(k, c.Session) {
		if binding, err = callBinding(c); err != nil {
			return errorResult(fmt.Sprintf("evokore cannot pass the answers of '%s' on: %v", c.Entry.Name, err)), nil
		}
		keep := release
		release = func() {}
		return s.hold(ctx, t, binding, keep)
	}
	childToken, end := s.routes.begin(ctx, ch.spec.ID, c.Session, c.Meta.GetMeta()["progressToken"])
	defer end()
	t.req.meta = put(t.req.meta, "progressToken", childToken)
	res, reqs, inner, err := t.send(ctx, responses, state)
	if err == nil && reqs != nil {
		return s.rounds(ctx, t, binding, reqs, inner)
	}
	return t.outcome(ctx, res, err)
}

// rounds goes on with a call whose child answered input_required,
// asking reqs with its state inner (roundTrip, era.go), within the
// call's request timeout.
func (s *Supervisor) rounds(ctx context.Context, t toolCall, binding string, reqs mcp.InputRequestMap, inner string) (*mcp.CallToolResult, error) {
	cctx, cancel := context.WithDeadline(ctx, t.req.deadline)
	defer cancel()
	res, err := roundTrip(cctx, s, t.ch, exchange[*mcp.CallToolResult]{
		sess: t.c.Session, binding: binding, send: t.send,
		pass: func(reqs mcp.InputRequestMap, state string) *mcp.CallToolResult {
			return &mcp.CallToolResult{InputRequests: reqs, RequestState: state}
		},
		names: func() (string, string) {
			tool := "'" + t.c.Entry.Original + "'"
			return tool, "in one call of " + tool
		},
	}, reqs, inner)
	return t.outcome(ctx, res, err)
}

// toolCall is one proxied call on its way: the router's call, the
// connection it goes to and the request as that connection's era asks
// it (without the rounds' answers).
type toolCall struct {
	ch      *child
	k       *conn
	c       *router.Call
	req     toolRequest
	timeout time.Duration
}

// send sends the call with a round's answers and the child's state, and
// reads the child's answer as the caller takes it.
func (t *toolCall) send(ctx context.Context, responses mcp.InputResponseMap, state string) (*mcp.CallToolResult, mcp.InputRequestMap, string, error) {
	req := t.req
	req.responses, req.state = responses, state
	a, err := t.carry(ctx, req)
	if errors.Is(err, mcp.ErrSessionMissing) && ctx.Err() == nil && t.k.reopenedByRunLoop() {
		// The server answered that it forgot the session, so it did not
		// run the call: send it again on the session the run loop opens.
		t.ch.expire(t.k)
		wait, cancel := context.WithDeadline(ctx, req.deadline)
		defer cancel()
		if next := t.ch.reconnected(wait, t.k); next != nil {
			t.k = next
			a, err = t.carry(ctx, req)
		}
	}
	if err != nil {
		return nil, nil, "", err
	}
	res := t.k.result(t.c, a, t.ch.spec.ID)
	return res, res.InputRequests, res.RequestState, nil
}

// carry takes req to the child on the connection's carrier, as the
// child's own task when req asks for one.
func (t *toolCall) carry(ctx context.Context, req toolRequest) (answer, error) {
	if tc, ok := t.k.carrier.(taskCarrier); ok && req.taskTTL > 0 {
		return carryTask(ctx, tc, req, t.timeout)
	}
	return t.k.carrier.carry(ctx, req)
}

// outcome is what the call answers: the child's result once the log and
// progress messages it wrote before it have gone on, or its failure in
// words the model can read, or the JSON-RPC error the child answered.
func (t *toolCall) outcome(ctx context.Context, res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	ch, tool := t.ch, t.c.Entry.Original
	if err == nil {
		t.k.order.settle(ctx)
		ch.recordCall(nil)
		return res, nil
	}
	if failed := (*inputFailure)(nil); errors.As(err, &failed) {
		ch.recordCall(nil)
		return errorResult(failed.msg), nil
	}
	ch.recordCall(err)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err() // the client cancelled; the carrier told the child
	case errors.Is(err, errStoppedReading):
		// The request did not fit in the child's input: it is being
		// stopped (lockedStdin), and is marked down at once, so the next
		// call waits for its restart.
		ch.lost(t.k)
		return errorResult(MsgStoppedReading(tool, ch.spec.ID, t.timeout)), nil
	case errors.Is(err, context.DeadlineExceeded) && !time.Now().Before(t.req.deadline):
		return errorResult(MsgCallTimeout(tool, ch.spec.ID, t.timeout)), nil
	}
	if r, ok, werr := childAnswer(err); ok {
		return r, werr
	}
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || ch.connectionLost() {
		ch.lost(t.k)
		return errorResult(MsgDiedDuringCall(tool, ch.spec.ID)), nil
	}
	return errorResult(ch.redact.Replace(err.Error())), nil
}

// put sets meta[k] to a non-empty v, making meta when it is nil.
func put(meta mcp.Meta, k, v string) mcp.Meta {
	if v == "" {
		return meta
	}
	if meta == nil {
		meta = mcp.Meta{}
	}
	meta[k] = v
	return meta
}

// callArgs is what a call sends as its arguments: an object, {} when the
// client sent none.
func callArgs(args json.RawMessage) json.RawMessage {
	if len(args) == 0 || string(args) == "null" {
		return json.RawMessage("{}")
	}
	return args
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
