package proxy

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A child writes a call's log messages and progress before the call's
// result, and the client must see them in that order: over streamable
// HTTP a message that comes after the result has no stream left to go on.
// The SDK delivers a result to the waiting call as soon as it is read,
// while notifications wait their turn in a handler queue, so the router
// could answer the call before passing on its last log line.
//
// noteOrder restores the order. What a stdio child writes is counted as
// its output is read (jsonLines.noted), before the wire takes a result
// off it; any other child's log and progress notifications are counted
// as its connection reads them (orderedTransport). A middleware counts
// them as their handlers finish. A call whose result arrived, through the
// SDK or the wire, waits (briefly) until every notification read before
// it was passed on.
type noteOrder struct {
	mu      sync.Mutex
	read    uint64
	handled uint64
	changed chan struct{}
}

// orderedMethods are the notifications a call's result must not overtake.
func orderedMethod(method string) bool {
	return method == "notifications/message" || method == "notifications/progress"
}

// settleBound is the longest a result waits for earlier notifications. A
// notification the SDK drops before its handler (bad params) is never
// counted as handled: the wait then gives up and counts it.
const settleBound = time.Second

func (o *noteOrder) sawRead() {
	o.mu.Lock()
	o.read++
	o.mu.Unlock()
}

func (o *noteOrder) sawHandled() {
	o.mu.Lock()
	o.handled++
	if o.changed != nil {
		close(o.changed)
		o.changed = nil
	}
	o.mu.Unlock()
}

// settle waits until every notification read so far has been passed on.
func (o *noteOrder) settle(ctx context.Context) {
	o.mu.Lock()
	target := o.read
	o.mu.Unlock()
	var timer *time.Timer
	for {
		o.mu.Lock()
		if o.handled >= target {
			o.mu.Unlock()
			return
		}
		if o.changed == nil {
			o.changed = make(chan struct{})
		}
		ch := o.changed
		o.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(settleBound)
			defer timer.Stop()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-timer.C:
			o.mu.Lock()
			o.handled = max(o.handled, target)
			o.mu.Unlock()
			return
		}
	}
}

// middleware counts the ordered notifications as their handlers finish.
func (o *noteOrder) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if orderedMethod(method) {
			defer o.sawHandled()
		}
		return next(ctx, method, req)
	}
}

// orderedTransport counts the ordered notifications its connection reads.
// Only transports whose connections the SDK uses through the Connection
// interface alone are wrapped (stdio, SSE): the streamable HTTP client's
// connection has more methods the SDK looks for.
type orderedTransport struct {
	mcp.Transport
	order *noteOrder
}

func (t orderedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return orderedConn{Connection: conn, order: t.order}, nil
}

type orderedConn struct {
	mcp.Connection
	order *noteOrder
}

func (c orderedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && !req.ID.IsValid() && orderedMethod(req.Method) {
		c.order.sawRead()
	}
	return msg, err
}
