package server

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/router"
)

// inflight counts the calls being dispatched and can cancel them all, so
// that Shutdown can let them finish and cut the stragglers.
type inflight struct {
	mu      sync.Mutex
	n       int
	cancels map[*router.Call]context.CancelFunc
	idle    chan struct{} // closed while n == 0; nil means idle
}

// track is the router Middleware that registers each dispatched call
// until it returns.
func (f *inflight) track(next router.Dispatch) router.Dispatch {
	return func(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
		ctx, cancel := context.WithCancel(ctx)
		f.add(c, cancel)
		defer f.done(c, cancel)
		return next(ctx, c)
	}
}

func (f *inflight) add(c *router.Call, cancel context.CancelFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		f.idle = make(chan struct{})
	}
	f.n++
	if f.cancels == nil {
		f.cancels = map[*router.Call]context.CancelFunc{}
	}
	f.cancels[c] = cancel
}

func (f *inflight) done(c *router.Call, cancel context.CancelFunc) {
	cancel()
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.cancels, c)
	f.n--
	if f.n == 0 {
		close(f.idle)
		f.idle = nil
	}
}

// wait blocks until no call is in flight (true) or ctx ends (false).
func (f *inflight) wait(ctx context.Context) bool {
	f.mu.Lock()
	idle := f.idle
	f.mu.Unlock()
	if idle == nil {
		return true
	}
	select {
	case <-idle:
		return f.wait(ctx)
	case <-ctx.Done():
		return false
	}
}

// cancelAll cancels every call in flight.
func (f *inflight) cancelAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cancel := range f.cancels {
		cancel()
	}
}
