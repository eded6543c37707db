package router

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
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
		return invalidArguments(c.Entry.Name, problems), nil
	}
	return nil, nil
})

func invalidArguments(tool string, problems []string) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "Invalid arguments for '%s':", tool)
	for _, p := range problems {
		b.WriteString("\n- ")
		b.WriteString(p)
	}
	return native.Errorf("%s", b.String())
}

// Recover turns a panic in dispatch into a -32603 error for that call
// alone; report receives the panic value and stack. One bad input must
// never take the router and its children down.
func Recover(report func(c *Call, v any, stack []byte)) Middleware {
	return func(next Dispatch) Dispatch {
		return func(ctx context.Context, c *Call) (res *mcp.CallToolResult, err error) {
			defer func() {
				if v := recover(); v != nil {
					if report != nil {
						report(c, v, debug.Stack())
					}
					res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("internal error in %s", c.Entry.Name)}
				}
			}()
			return next(ctx, c)
		}
	}
}

// NativeDeadline bounds every native handler by d: a handler that blocks
// (a FIFO, a slow disk) ends with its context, and the call answers. A
// handler that ignores its context keeps its goroutine, but the client is
// answered. Proxied and plugin calls have their own timeouts.
func NativeDeadline(d time.Duration) Middleware {
	return func(next Dispatch) Dispatch {
		if d <= 0 {
			return next
		}
		return func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
			if c.Entry.Source != catalog.SourceNative {
				return next(ctx, c)
			}
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := next(ctx, c)
				done <- outcome{res, err}
			}()
			select {
			case o := <-done:
				return o.res, o.err
			case <-ctx.Done():
				if ctx.Err() == context.DeadlineExceeded {
					return native.Errorf("%s did not finish within %s", c.Entry.Name, d), nil
				}
				return nil, ctx.Err()
			}
		}
	}
}
