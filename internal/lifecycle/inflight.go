package lifecycle

import (
	"context"
	"sync"
)

// InFlight counts the work under way and can cancel all of it, so that a
// shutdown lets it finish and then cuts the stragglers, as
// http.Server.Shutdown does with its connections. The zero value is
// ready.
type InFlight struct {
	mu      sync.Mutex
	n       int
	cancels map[*context.CancelFunc]struct{}
	idle    chan struct{} // closed while n == 0; nil means idle
}

// Begin counts one piece of work in: it runs under the returned context,
// which CancelAll cancels, and calls end once it is over.
func (f *InFlight) Begin(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	key := &cancel
	f.mu.Lock()
	if f.n == 0 {
		f.idle = make(chan struct{})
	}
	f.n++
	if f.cancels == nil {
		f.cancels = map[*context.CancelFunc]struct{}{}
	}
	f.cancels[key] = struct{}{}
	f.mu.Unlock()
	return ctx, func() {
		cancel()
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.cancels, key)
		f.n--
		if f.n == 0 {
			close(f.idle)
			f.idle = nil
		}
	}
}

// Wait blocks until nothing is in flight (true) or ctx ends (false).
func (f *InFlight) Wait(ctx context.Context) bool {
	f.mu.Lock()
	idle := f.idle
	f.mu.Unlock()
	if idle == nil {
		return true
	}
	select {
	case <-idle:
		return f.Wait(ctx)
	case <-ctx.Done():
		return false
	}
}

// CancelAll cancels everything in flight.
func (f *InFlight) CancelAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for cancel := range f.cancels {
		(*cancel)()
	}
}
