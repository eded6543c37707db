package router

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native"
)

// Quarantine refuses a tool whose definition changed since an operator
// last accepted it. It runs first: nothing about a held tool is trusted.
var Quarantine Stage = StageFunc(func(_ context.Context, c *Call) (*mcp.CallToolResult, error) {
	if q := c.Entry.Quarantine; q != "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: q}
	}
	return nil, nil
})

// Validate checks the arguments against the tool's input schema and lists
// every violation, so the model can fix them all in one retry.
var Validate Stage = StageFunc(func(_ context.Context, c *Call) (*mcp.CallToolResult, error) {
	if problems := c.Entry.Validate(c.Args); problems != nil {
		return native.InvalidArguments(c.Entry.Name, problems...), nil
	}
	return nil, nil
})
