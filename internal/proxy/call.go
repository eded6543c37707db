package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/tracing"
)

// CallTool forwards a proxied call to its child, implementing
// router.Dispatcher. It waits for a child that is still booting, bounds
// the call by the request timeout, passes progress through and reports
// the child's failures as results the model can read. An error the child
// itself returned keeps its JSON-RPC code.
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
	cs, err := ch.session(ctx)
	if err != nil {
		return nil, err
	}
	childToken, end := s.routes.begin(ctx, ch.spec.ID, c.Session, c.Meta.GetMeta()["progressToken"])
	defer end()

	if c.Raw != nil {
		if wr := ch.wireFor(cs); wr != nil {
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			out := make(chan outcome, 1)
			s.startRaw(ctx, ch, cs, wr, c, childToken, func(res *mcp.CallToolResult, err error) { out <- outcome{res, err} })
			if c.Waiting != nil {
				c.Waiting()
			}
			o := <-out
			return o.res, o.err
		}
	}
	params := &mcp.CallToolParams{Name: c.Entry.Original, Arguments: callArgs(c.Args)}
	if childToken != "" {
		params.SetProgressToken(childToken)
	}
	if tp, ts := tracing.Inject(ctx, c.Meta); tp != "" {
		if params.Meta == nil {
			params.Meta = mcp.Meta{}
		}
		params.Meta["traceparent"] = tp
		if ts != "" {
			params.Meta["tracestate"] = ts
		}
	}
	timeout := s.requestTimeout(ch.spec)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := cs.CallTool(cctx, params)
	if err == nil {
		ch.order.settle(cctx)
	}
	ch.recordCall(err)
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return nil, ctx.Err() // the client cancelled; the SDK told the child
	case cctx.Err() == context.DeadlineExceeded:
		return errorResult(MsgCallTimeout(c.Entry.Original, ch.spec.ID, timeout)), nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return nil, we
	}
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || ch.connectionLost() {
		ch.lost(cs)
		return errorResult(MsgDiedDuringCall(c.Entry.Original, ch.spec.ID)), nil
	}
	return errorResult(ch.redact.Replace(err.Error())), nil
}

// StartCall implements router.Starter: a call on the fast path (c.Raw set)
// to a child that is connected over stdio is written to the child, and
// whichever of its outcomes comes first (the child's answer, its death,
// the timeout, the client's cancel) finishes it, on the goroutine it
// comes on. Anything that would have to wait first (a child still
// booting or restarting, an HTTP child, a server a reload removed) is
// left to CallTool.
func (s *Supervisor) StartCall(ctx context.Context, c *router.Call, done func(*mcp.CallToolResult, error)) bool {
	if c.Raw == nil {
		return false
	}
	ch, ok := s.child(c.Entry.Server)
	if !ok {
		return false
	}
	cs := ch.connected()
	if cs == nil {
		return false
	}
	wr := ch.wireFor(cs)
	if wr == nil || !ch.enter() {
		return false
	}
	childToken, end := s.routes.begin(ctx, ch.spec.ID, c.Session, c.Meta.GetMeta()["progressToken"])
	s.startRaw(ctx, ch, cs, wr, c, childToken, func(res *mcp.CallToolResult, err error) {
		end()
		ch.leave()
		done(res, err)
	})
	return true
}

// callArgs is what a call sends as its arguments: an object, {} when the
// client sent none.
func callArgs(args json.RawMessage) json.RawMessage {
	if len(args) == 0 || string(args) == "null" {
		return json.RawMessage("{}")
	}
	return args
}

// startRaw is the fast path's call: the request is written to the child
// as bytes under a router-owned id, and done receives the outcome exactly
// once, the child's result as bytes in c.Raw (never decoded beyond its
// top-level isError). The outcomes are CallTool's, case for case.
func (s *Supervisor) startRaw(ctx context.Context, ch *child, cs *mcp.ClientSession, wr *wire, c *router.Call, childToken string, done func(*mcp.CallToolResult, error)) {
	rc := &rawCall{ctx: ctx, ch: ch, cs: cs, wr: wr, c: c, done: done, timeout: s.requestTimeout(ch.spec)}
	id, ok := wr.begin(rc.settle)
	if !ok {
		rc.died()
		return
	}
	rc.id = id
	// The timer and the cancel hook are set once the id is in flight,
	// and the answer may come first: whichever happens second undoes
	// them.
	rc.mu.Lock()
	if !rc.over {
		rc.timer = time.AfterFunc(rc.timeout, rc.timedOut)
		rc.stopCtx = context.AfterFunc(ctx, rc.cancelled)
	}
	rc.mu.Unlock()

	args := callArgs(c.Args)
	line := make([]byte, 0, len(args)+len(c.Entry.Original)+len(childToken)+120)
	line = append(line, `{"jsonrpc":"2.0","id":"`...)
	line = append(line, id...)
	line = append(line, `","method":"tools/call","params":{"name":`...)
	line = rawjson.Quote(line, c.Entry.Original)
	line = append(line, `,"arguments":`...)
	line = append(line, args...)
	if tp, ts := tracing.Inject(ctx, c.Meta); childToken != "" || tp != "" {
		line = append(line, `,"_meta":{`...)
		sep := ""
		for _, kv := range [][2]string{{"progressToken", childToken}, {"traceparent", tp}, {"tracestate", ts}} {
			if kv[1] != "" {
				line = append(line, sep...)
				line = rawjson.Quote(line, kv[0])
				line = append(line, ':')
				line = rawjson.Quote(line, kv[1])
				sep = ","
			}
		}
		line = append(line, '}')
	}
	line = append(line, "}}\n"...)
	if err := wr.send(line); err != nil && wr.giveUp(id) {
		rc.unhook()
		rc.died()
	}
}

// rawCall is one fast-path call in flight. Whoever takes its id out of
// the wire's pending set owns its outcome and calls done: the child's
// reader with the answer or the end of the output (settle), the timer,
// the client's cancel, or a write that failed.
type rawCall struct {
	ctx     context.Context
	ch      *child
	cs      *mcp.ClientSession
	wr      *wire
	c       *router.Call
	done    func(*mcp.CallToolResult, error)
	timeout time.Duration
	id      string

	mu      sync.Mutex
	over    bool
	timer   *time.Timer
	stopCtx func() bool
}

// settle ends the call with what the child's output brought.
func (rc *rawCall) settle(r wireReply) {
	rc.unhook()
	switch {
	case r.lost:
		rc.died()
	case r.err != nil:
		rc.ch.recordCall(r.err)
		rc.done(nil, r.err)
	default:
		rc.ch.recordCall(nil)
		res := &mcp.CallToolResult{IsError: rawjson.IsTrue(rawjson.Member(r.result, "isError"))}
		rc.c.Raw.Bytes, rc.c.Raw.Result = r.result, res
		rc.done(res, nil)
	}
}

func (rc *rawCall) timedOut() {
	rc.giveUp("timed out", context.DeadlineExceeded, errorResult(MsgCallTimeout(rc.c.Entry.Original, rc.ch.spec.ID, rc.timeout)), nil)
}

func (rc *rawCall) cancelled() {
	rc.giveUp("the client cancelled the call", rc.ctx.Err(), nil, rc.ctx.Err())
}

// giveUp ends the call from this side when its id was still in flight,
// telling the child.
func (rc *rawCall) giveUp(reason string, cause error, res *mcp.CallToolResult, err error) {
	if !rc.wr.giveUp(rc.id) {
		return
	}
	rc.unhook()
	rc.wr.cancel(rc.id, reason)
	rc.ch.recordCall(cause)
	rc.done(res, err)
}

// unhook stops the timer and the cancel hook, or keeps them from being
// set.
func (rc *rawCall) unhook() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.over = true
	if rc.timer != nil {
		rc.timer.Stop()
		rc.stopCtx()
	}
}

func (rc *rawCall) died() {
	rc.ch.recordCall(errors.New("connection closed"))
	rc.ch.lost(rc.cs)
	rc.done(errorResult(MsgDiedDuringCall(rc.c.Entry.Original, rc.ch.spec.ID)), nil)
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
