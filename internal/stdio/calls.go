package stdio

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/rawjson"
)

// Call is a tools/call a FastPath took, ready to run: its answer is raw,
// the result's bytes as the tool sent them, when not nil; else res, or
// err (a JSON-RPC error).
type Call interface {
	Run(ctx context.Context) (res *mcp.CallToolResult, raw []byte, err error)
}

// Calls is the FastPath of the calls a server answers itself (the
// router's proxied calls): take decides which, and Calls keeps what the
// connection must know of the ones it runs, their ids, so that a
// notifications/cancelled cancels the right call. A request reusing the
// id of one still running never reaches it: the connection refuses it,
// as the SDK refuses one of its own. Each call runs on the goroutine that read it while
// reading goes on on another, so calls run concurrently as the SDK runs
// its own.
type Calls struct {
	take func(params []byte) (Call, bool)

	mu sync.Mutex
	// inflight maps a taken call's id, as idKey gives it ("a" and
	// "\u0061" are one id), to its cancel.
	inflight map[any]context.CancelFunc
}

var _ FastPath = (*Calls)(nil)

// NewCalls is the FastPath of the calls take takes: given a
// tools/call's raw params, the call to run, or false to leave the
// request to the SDK.
func NewCalls(take func(params []byte) (Call, bool)) *Calls {
	return &Calls{take: take, inflight: map[any]context.CancelFunc{}}
}

// CallMeta is what a call's _meta may carry on the fast path over stdio:
// a progress token (progress is written to the same stream) and the
// trace context. Anything else (the per-request protocol of 2026-07-28,
// say) is the SDK's to read.
func CallMeta(k string) bool {
	return k == "progressToken" || k == "traceparent" || k == "tracestate"
}

// Take implements FastPath.
func (f *Calls) Take(m Message, r Replier) (func(), bool) {
	switch m.Method {
	case "notifications/cancelled":
		return nil, f.cancel(m)
	case "tools/call":
		return f.call(m, r)
	}
	return nil, false
}

// cancel cancels a taken call; cancellations of other requests are the
// SDK's.
func (f *Calls) cancel(m Message) bool {
	if m.Params == nil {
		return false
	}
	id := rawjson.Member(m.Params, "requestId")
	if id == nil || checkID(id) != nil {
		return false
	}
	f.mu.Lock()
	cancel, ok := f.inflight[idKey(id)]
	f.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

// call takes a tools/call and returns it to run, or returns false to
// leave it to the SDK.
func (f *Calls) call(m Message, r Replier) (func(), bool) {
	c, ok := f.take(m.Params)
	if !ok {
		return nil, false
	}
	key := idKey(m.ID)
	f.mu.Lock()
	ctx, cancel := context.WithCancel(context.Background())
	f.inflight[key] = cancel
	f.mu.Unlock()
	return func() {
		defer cancel()
		res, raw, err := c.Run(ctx)
		// The id is free again once answered: a client may reuse it.
		f.mu.Lock()
		delete(f.inflight, key)
		f.mu.Unlock()
		Answer(r, m.ID, res, raw, err)
	}, true
}
