package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/childauth"
	"github.com/evokore/evokore/internal/config"
)

// A carrier takes one tools/call to a child's connection and brings the
// child's answer back: how a call travels, as net/http's RoundTripper is,
// never what it means. Each transport has one: the line wire for a stdio
// child (wire.go), the SDK's client over the child's http.Client for a
// streamable HTTP or SSE child (httpCarrier). What the call means (the
// era's _meta, input_required, the outcome the model reads) is the
// caller's: call.go and the era adapter (era.go).
//
// ctx is the call's: its cancel is the client's. The request timeout
// ends at req.deadline. A carrier returns ctx's error when ctx ended
// first, context.DeadlineExceeded at the deadline, a *jsonrpc.Error the
// child answered with, errStoppedReading when the request did not fit in
// the child's input, or an error wrapping mcp.ErrConnectionClosed when
// the connection ended under the call.
type carrier interface {
	carry(ctx context.Context, req toolRequest) (answer, error)
}

// toolRequest is a tools/call as a carrier sends it: the child's own
// tool name, the arguments as the bytes they are (an object), the _meta
// and, in a retry after input_required, the answers and the child's
// requestState; deadline is when the request timeout ends. (A deadline,
// not a context of its own: the line wire waits on one timer, which
// costs a quarter of a context's allocations on every call.)
type toolRequest struct {
	name      string
	args      json.RawMessage
	meta      mcp.Meta
	responses mcp.InputResponseMap
	state     string
	deadline  time.Time
	// taskTTL, when set, asks the child to run the call as a task of
	// that lifetime (childtask.go): its answer is the task created.
	taskTTL time.Duration
}

// answer is a child's result as its carrier brings it: the bytes the
// child sent (the line wire) or the SDK's decoding of them.
type answer struct {
	raw []byte
	res *mcp.CallToolResult
}

// errLost ends a call whose child's output ended under it.
var errLost = fmt.Errorf("%w: the server's output ended", mcp.ErrConnectionClosed)

// httpCarrier carries a call to a streamable HTTP or SSE child through
// the SDK's client session, whose transport sends it with the child's
// http.Client (httpTransport): authorization plugs in there.
type httpCarrier struct{ cs *mcp.ClientSession }

func (h httpCarrier) carry(ctx context.Context, req toolRequest) (answer, error) {
	ctx, cancel := context.WithDeadline(ctx, req.deadline)
	defer cancel()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Meta: req.meta, Name: req.name, Arguments: req.args, InputResponses: req.responses, RequestState: req.state})
	return answer{res: res}, err
}

// httpTransport is the MCP transport to a remote child (spec resolved):
// the one place where its http.Client is built, with the configured
// headers and evokore's authorization to the child (Options.Authorizer).
// The streamable HTTP transport takes the authorizer's OAuth handler,
// which the SDK asks for a token on every request of that client and on
// a 401 or 403 (and fails the connection when a call is cancelled during
// a login); the SSE transport has no such hook, so the handler wraps
// its client's round tripper (childauth.Transport).
func (c *child) httpTransport(spec config.Server, timeout time.Duration) (mcp.Transport, error) {
	if spec.URL == "" {
		return nil, errFatal{fmt.Errorf("HTTP server '%s' requires a 'url' field", spec.ID)}
	}
	var h auth.OAuthHandler
	if a := c.sup.opts.Authorizer; a != nil {
		// The spec as written: tokens are kept by the server's identity,
		// and an instance's are its caller's.
		h = a.Handler(c.spec, c.authOwner())
	}
	var rt http.RoundTripper = http.DefaultTransport
	if len(spec.Headers) > 0 {
		rt = childauth.Headers{Set: spec.Headers, Base: rt}
	}
	if spec.Transport == config.TransportSSE {
		if h != nil {
			rt = childauth.Transport(h, rt)
		}
		return &sseTransport{inner: &mcp.SSEClientTransport{Endpoint: spec.URL, HTTPClient: clientOf(rt)}, life: c.sup.ctx, timeout: timeout}, nil
	}
	return &mcp.StreamableClientTransport{Endpoint: spec.URL, HTTPClient: clientOf(rt), OAuthHandler: h}, nil
}

// clientOf is the http.Client over rt; nil (the SDK's default client)
// when rt adds nothing.
func clientOf(rt http.RoundTripper) *http.Client {
	if rt == http.DefaultTransport {
		return nil
	}
	return &http.Client{Transport: rt}
}
