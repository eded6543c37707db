package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/router"
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

	args := c.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if c.Raw != nil {
		if wr := ch.wireFor(cs); wr != nil {
			return s.callRaw(ctx, ch, cs, wr, c, args, childToken)
		}
	}
	params := &mcp.CallToolParams{Name: c.Entry.Original, Arguments: args}
	if childToken != "" {
		params.SetProgressToken(childToken)
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

// callRaw is CallTool on the fast path: the request is written to the
// child as bytes under a router-owned id and the child's result comes
// back as bytes in c.Raw, never decoded beyond its top-level isError.
// Its outcomes are CallTool's, case for case.
func (s *Supervisor) callRaw(ctx context.Context, ch *child, cs *mcp.ClientSession, wr *wire, c *router.Call, args json.RawMessage, childToken string) (*mcp.CallToolResult, error) {
	id, reply, done := wr.begin()
	defer done()
	line := make([]byte, 0, len(args)+len(c.Entry.Original)+len(childToken)+120)
	line = append(line, `{"jsonrpc":"2.0","id":"`...)
	line = append(line, id...)
	line = append(line, `","method":"tools/call","params":{"name":`...)
	line = rawjson.Quote(line, c.Entry.Original)
	line = append(line, `,"arguments":`...)
	line = append(line, args...)
	if childToken != "" {
		line = append(line, `,"_meta":{"progressToken":"`...)
		line = append(line, childToken...)
		line = append(line, `"}`...)
	}
	line = append(line, "}}\n"...)

	timeout := s.requestTimeout(ch.spec)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	died := func() (*mcp.CallToolResult, error) {
		ch.recordCall(errors.New("connection closed"))
		ch.lost(cs)
		return errorResult(MsgDiedDuringCall(c.Entry.Original, ch.spec.ID)), nil
	}
	if err := wr.send(line); err != nil {
		return died()
	}
	if c.Waiting != nil {
		c.Waiting()
	}
	select {
	case r := <-reply:
		if r.err != nil {
			ch.recordCall(r.err)
			return nil, r.err
		}
		ch.recordCall(nil)
		res := &mcp.CallToolResult{IsError: rawjson.IsTrue(rawjson.Member(r.result, "isError"))}
		c.Raw.Bytes, c.Raw.Result = r.result, res
		return res, nil
	case <-wr.closed:
		// The answer may have come in just before the output ended.
		select {
		case r := <-reply:
			if r.err == nil {
				res := &mcp.CallToolResult{IsError: rawjson.IsTrue(rawjson.Member(r.result, "isError"))}
				c.Raw.Bytes, c.Raw.Result = r.result, res
				return res, nil
			}
		default:
		}
		return died()
	case <-ctx.Done():
		wr.cancel(id, "the client cancelled the call")
		ch.recordCall(ctx.Err())
		return nil, ctx.Err()
	case <-timer.C:
		wr.cancel(id, "timed out")
		ch.recordCall(context.DeadlineExceeded)
		return errorResult(MsgCallTimeout(c.Entry.Original, ch.spec.ID, timeout)), nil
	}
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
