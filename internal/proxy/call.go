package proxy

//lint:file-ignore SA1019 logging passes through on purpose; see docs/decisions.md

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/childauth"
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
	// A child that needs authorization asks this call's client.
	ctx = childauth.WithCaller(ctx, c.Session)
	cs, err := ch.session(ctx)
	if err != nil {
		return authFailure(err)
	}
	// A caller of the new era is served on the child's connection of
	// that era when the child speaks both (dual.go).
	cs, second := ch.connFor(ctx, c.Session, cs)
	order := &ch.order
	if second != nil {
		order = &second.order
	}
	childToken, end := s.routes.begin(ctx, ch.spec.ID, c.Session, c.Meta.GetMeta()["progressToken"])
	defer end()

	timeout := s.requestTimeout(ch.spec)
	// The wire carries a first call as bytes, with a new-era caller's
	// protocol and capabilities in _meta. A complete answer goes back as
	// bytes; an input_required one (only a child of the new era sends
	// it) is decoded and read below as the SDK's answer is. A retry with
	// input goes through the SDK.
	newChild := childNewEra(cs)
	var res *mcp.CallToolResult
	if c.Raw != nil && c.Input == nil && (!newChild || c.Meta.GetMeta()[mcp.MetaKeyLogLevel] == nil) {
		if wr := ch.rawWire(cs, second); wr != nil {
			r, err := rawCall(ctx, ch, cs, wr, order, c, childToken, timeout)
			if !newChild || err != nil || r != c.Raw.Result {
				return r, err
			}
			if plain, ok := completeBytes(c.Raw.Bytes); ok {
				c.Raw.Bytes = plain
				return r, nil
			}
			res = &mcp.CallToolResult{}
			if err := json.Unmarshal(c.Raw.Bytes, res); err != nil {
				return errorResult(fmt.Sprintf("the '%s' server answered '%s' with a result evokore cannot read: %v", ch.spec.ID, c.Entry.Original, err)), nil
			}
			c.Raw.Bytes, c.Raw.Result = nil, nil
		}
	}
	params := &mcp.CallToolParams{Name: c.Entry.Original, Arguments: callArgs(c.Args)}
	params.Meta = ch.eraMeta(c.Session, params.Meta)
	if lvl, ok := c.Meta.GetMeta()[mcp.MetaKeyLogLevel]; ok && newChild && params.Meta != nil {
		// The new era's log level is the caller's, per request.
		params.Meta[mcp.MetaKeyLogLevel] = lvl
	}
	if childToken != "" {
		params.SetProgressToken(childToken)
	}
	var binding string
	if newChild || c.Input != nil {
		var err error
		if binding, err = callBinding(c); err != nil {
			return errorResult(fmt.Sprintf("evokore cannot pass the answers of '%s' on: %v", c.Entry.Name, err)), nil
		}
	}
	if in := c.Input; in != nil {
		// A retry after input_required: the answers go to this child only
		// when the state is the one sealed for this call to it.
		if in.State != "" {
			inner, err := s.openState(in.State, ch.spec.ID, binding, "'"+c.Entry.Name+"'")
			if err != nil {
				return nil, err
			}
			params.RequestState = inner
		}
		params.InputResponses = in.Responses
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
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if res == nil {
		res, err = cs.CallTool(cctx, params)
	}
	if errors.Is(err, mcp.ErrSessionMissing) && ctx.Err() == nil && second == nil {
		// The server answered that it forgot the session, so it did not
		// run the call: send it again on the session the run loop opens.
		ch.expire(cs)
		if next := ch.reconnected(cctx, cs); next != nil {
			cs = next
			res, err = cs.CallTool(cctx, params)
		}
	}
	for round := 1; err == nil && res.InputRequests != nil; round++ {
		// The child asks for input (input_required). A client of the new
		// era is asked in the call's answer; one of the old era is asked
		// over its session by the router, which then retries the call.
		if roundTrips(c.Session) {
			order.settle(cctx)
			ch.recordCall(nil)
			return s.inputRequired(ch, c, binding, res), nil
		}
		if round > maxRounds {
			ch.recordCall(nil)
			return errorResult(fmt.Sprintf("the '%s' server asked for input more than %d times in one call of '%s'; evokore stopped it", ch.spec.ID, maxRounds, c.Entry.Original)), nil
		}
		answers, aerr := answerInputs(cctx, ch, c.Session, res.InputRequests)
		if aerr != nil {
			ch.recordCall(nil)
			return errorResult(fmt.Sprintf("'%s' needs input the client could not give: %v", c.Entry.Original, ch.redact.Replace(aerr.Error()))), nil
		}
		next := *params
		next.InputResponses, next.RequestState = answers, res.RequestState
		res, err = cs.CallTool(cctx, &next)
	}
	if err == nil {
		order.settle(cctx)
	}
	ch.recordCall(err)
	switch {
	case err == nil:
		// A child of the new era names itself in every result; to the
		// client the server that answered is evokore.
		delete(res.Meta, mcp.MetaKeyServerInfo)
		return res, nil
	case ctx.Err() != nil:
		return nil, ctx.Err() // the client cancelled; the SDK told the child
	case errors.Is(err, errStoppedReading):
		// The request did not fit in the child's input: it is being
		// stopped (lockedStdin).
		ch.lost(cs)
		return errorResult(MsgStoppedReading(c.Entry.Original, ch.spec.ID, timeout)), nil
	case cctx.Err() == context.DeadlineExceeded:
		return errorResult(MsgCallTimeout(c.Entry.Original, ch.spec.ID, timeout)), nil
	}
	if r, ok, werr := childAnswer(err); ok {
		return r, werr
	}
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || ch.connectionLost() {
		ch.lost(cs)
		return errorResult(MsgDiedDuringCall(c.Entry.Original, ch.spec.ID)), nil
	}
	return errorResult(ch.redact.Replace(err.Error())), nil
}

// completeBytes is a child's raw result as the caller gets it when it is
// complete (no resultType, or "complete"), without the serverInfo a
// child of the new era names itself with: to the client the server that
// answered is evokore. ok is false for any other resultType.
func completeBytes(res []byte) (out []byte, ok bool) {
	if kind := rawjson.Member(res, "resultType"); kind != nil {
		if v, _ := rawjson.String(kind); v != "complete" {
			return nil, false
		}
	}
	if !bytes.Contains(res, []byte(mcp.MetaKeyServerInfo)) {
		return res, true
	}
	out = append(make([]byte, 0, len(res)), '{')
	sep := ""
	_ = rawjson.RawMembers(res, func(name, v []byte) bool {
		if string(rawjson.Name(name)) == "_meta" {
			meta := []byte{'{'}
			msep := ""
			_ = rawjson.RawMembers(v, func(k, mv []byte) bool {
				if string(rawjson.Name(k)) != mcp.MetaKeyServerInfo {
					meta = append(append(append(append(meta, msep...), k...), ':'), mv...)
					msep = ","
				}
				return true
			})
			if msep == "" {
				return true // nothing else in _meta
			}
			v = append(meta, '}')
		}
		out = append(append(append(append(out, sep...), name...), ':'), v...)
		sep = ","
		return true
	})
	return append(out, '}'), true
}

// callArgs is what a call sends as its arguments: an object, {} when the
// client sent none.
func callArgs(args json.RawMessage) json.RawMessage {
	if len(args) == 0 || string(args) == "null" {
		return json.RawMessage("{}")
	}
	return args
}

// rawCall forwards a call whose caller takes the result as bytes (c.Raw)
// over the child's wire: the request is written as bytes under a
// router-owned id, and the child's result comes back as the bytes it
// sent, read for its top-level isError only. The outcomes are the SDK
// path's, case for case. Whoever takes the id out of the wire's pending
// set owns the outcome: the child's reader (the answer, or the end of
// its output) or this call (its timeout, the client's cancel, a failed
// write), which then tells the child it gave up.
func rawCall(ctx context.Context, ch *child, cs *mcp.ClientSession, wr *wire, order *noteOrder, c *router.Call, childToken string, timeout time.Duration) (*mcp.CallToolResult, error) {
	id, reply, ok := wr.begin()
	if !ok {
		return died(ch, cs, c)
	}
	args := callArgs(c.Args)
	line := make([]byte, 0, len(args)+len(c.Entry.Original)+len(childToken)+120)
	line = append(line, `{"jsonrpc":"2.0","id":"`...)
	line = append(line, id...)
	line = append(line, `","method":"tools/call","params":{"name":`...)
	line = rawjson.Quote(line, c.Entry.Original)
	line = append(line, `,"arguments":`...)
	line = append(line, args...)
	era := ch.eraMeta(c.Session, nil)
	if tp, ts := tracing.Inject(ctx, c.Meta); childToken != "" || tp != "" || era != nil {
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
		// A caller of the new era: its protocol, capabilities and client,
		// which the child reads per request.
		for _, k := range []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities, mcp.MetaKeyClientInfo} {
			if v, ok := era[k]; ok {
				b, err := json.Marshal(v)
				if err != nil {
					continue
				}
				line = append(line, sep...)
				line = rawjson.Quote(line, k)
				line = append(line, ':')
				line = append(line, b...)
				sep = ","
			}
		}
		line = append(line, '}')
	}
	line = append(line, "}}\n"...)
	// The timeout counts from before the write: a write to a child that
	// reads slowly takes part of it.
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	if err := wr.send(line); err != nil && wr.giveUp(id) {
		if errors.Is(err, errStoppedReading) {
			return stoppedReading(ch, cs, c, timeout)
		}
		return died(ch, cs, c)
	}
	// A given-up call tells the child on a goroutine of its own: the
	// caller has its answer, and a child slow to read its input (the
	// write is bounded, see lockedStdin) must not delay it.
	var r wireReply
	select {
	case r = <-reply:
	case <-timer.C:
		if wr.giveUp(id) {
			go wr.cancel(id, "timed out")
			ch.recordCall(context.DeadlineExceeded)
			return errorResult(MsgCallTimeout(c.Entry.Original, ch.spec.ID, timeout)), nil
		}
		r = <-reply // the answer won the race
	case <-ctx.Done():
		if wr.giveUp(id) {
			go wr.cancel(id, "the client cancelled the call")
			ch.recordCall(ctx.Err())
			return nil, ctx.Err()
		}
		r = <-reply
	}
	switch {
	case r.lost:
		return died(ch, cs, c)
	case r.err != nil:
		ch.recordCall(r.err)
		return nil, r.err
	}
	order.settle(ctx)
	ch.recordCall(nil)
	res := &mcp.CallToolResult{IsError: rawjson.IsTrue(rawjson.Member(r.result, "isError"))}
	c.Raw.Bytes, c.Raw.Result = r.result, res
	return res, nil
}

// died is the answer to a call whose child's output ended under it.
func died(ch *child, cs *mcp.ClientSession, c *router.Call) (*mcp.CallToolResult, error) {
	ch.recordCall(errors.New("connection closed"))
	ch.lost(cs)
	return errorResult(MsgDiedDuringCall(c.Entry.Original, ch.spec.ID)), nil
}

// stoppedReading is the answer to a call whose request its child did not
// take in time: the child is being stopped (lockedStdin), and is marked
// down at once, so the next call waits for its restart.
func stoppedReading(ch *child, cs *mcp.ClientSession, c *router.Call, timeout time.Duration) (*mcp.CallToolResult, error) {
	ch.recordCall(errStoppedReading)
	ch.lost(cs)
	return errorResult(MsgStoppedReading(c.Entry.Original, ch.spec.ID, timeout)), nil
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
