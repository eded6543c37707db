package proxy

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sseTransport connects to a child on the older HTTP+SSE transport. The
// SDK's SSE client ties its event stream to the context Connect is given,
// and the router connects under a boot timeout: the stream would close as
// soon as the handshake returned. So the stream lives on the supervisor's
// context, while the boot timeout bounds only the connecting.
type sseTransport struct {
	inner   *mcp.SSEClientTransport
	life    context.Context
	timeout time.Duration
}

func (t *sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	life, cancel := context.WithCancel(t.life)
	stop := context.AfterFunc(ctx, cancel)
	timer := time.AfterFunc(t.timeout, cancel)
	conn, err := t.inner.Connect(life)
	timedOut := !timer.Stop()
	stop()
	if err != nil {
		cancel()
		if timedOut {
			return nil, errors.Join(context.DeadlineExceeded, err)
		}
		return nil, err
	}
	return &sseConn{Connection: conn, cancel: cancel}, nil
}

// sseConn ends the stream's context when the session closes.
type sseConn struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *sseConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}
