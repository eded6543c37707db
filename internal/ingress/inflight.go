package ingress

import (
	"context"
	"sync"

	"github.com/evokore/evokore/internal/rawjson"
)

// Inflight are the calls a byte path runs on one connection or session,
// by id (as IDKey gives it), so that the client's notifications/cancelled
// reaches the call it names. Its zero value is empty and ready.
type Inflight struct {
	mu    sync.Mutex
	calls map[any]context.CancelFunc
}

// Begin registers the call id, cancelled by cancel; false when a call
// with that id is running already (the SDK path answers a reused id).
func (f *Inflight) Begin(id []byte, cancel context.CancelFunc) bool {
	key := IDKey(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, dup := f.calls[key]; dup {
		return false
	}
	if f.calls == nil {
		f.calls = map[any]context.CancelFunc{}
	}
	f.calls[key] = cancel
	return true
}

// End forgets the call id: it answered, and the client may reuse its id.
func (f *Inflight) End(id []byte) {
	key := IDKey(id)
	f.mu.Lock()
	delete(f.calls, key)
	f.mu.Unlock()
}

// Cancel cancels the call the notifications/cancelled m names, and
// reports whether it named one of these; the cancellations of other
// requests are the SDK path's.
func (f *Inflight) Cancel(m Message) bool {
	cancel := f.named(m)
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}

// Running reports whether the notifications/cancelled m names one of
// these calls.
func (f *Inflight) Running(m Message) bool { return f.named(m) != nil }

// named is the cancel of the call m names, or nil.
func (f *Inflight) named(m Message) context.CancelFunc {
	if m.Method != MethodCancel || m.Params == nil {
		return nil
	}
	id := rawjson.Member(m.Params, "requestId")
	if id == nil || checkID(id) != nil {
		return nil
	}
	key := IDKey(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[key]
}
