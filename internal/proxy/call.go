package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
