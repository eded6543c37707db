package server

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/stdio"
)

// fastCalls takes the stdio session's proxied tools/call off the
// transport before the go-sdk decodes them (see package proxy's doc): each
// runs on a goroutine of its own, as the SDK runs its calls, through the
// same router pipeline as every call, with the arguments as the bytes the
// client sent, and is answered with the child's result bytes. Everything
// else (native tools, names not in the catalog, calls with params it does
// not know) goes on to the SDK unchanged.
type fastCalls struct {
	view *view

	mu sync.Mutex
	// inflight maps a taken call's raw id to its cancel, for
	// notifications/cancelled.
	inflight map[string]context.CancelFunc
}

var _ stdio.FastPath = (*fastCalls)(nil)

// Take implements stdio.FastPath.
func (f *fastCalls) Take(m stdio.Message, r stdio.Replier) bool {
	switch m.Method {
	case "notifications/cancelled":
		return f.cancel(m)
	case "tools/call":
		return m.ID != nil && f.call(m, r)
	}
	return false
}

// cancel cancels a taken call; cancellations of other requests are the
// SDK's.
func (f *fastCalls) cancel(m stdio.Message) bool {
	if m.Params == nil {
		return false
	}
	id := rawjson.Member(m.Params, "requestId")
	if id == nil {
		return false
	}
	f.mu.Lock()
	cancel, ok := f.inflight[string(id)]
	f.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

// call takes a tools/call for a proxied tool and starts it, or returns
// false to leave it to the SDK.
func (f *fastCalls) call(m stdio.Message, r stdio.Replier) bool {
	if m.Params == nil {
		return false
	}
	var name string
	var args, meta []byte
	ok := true
	if rawjson.Members(m.Params, func(k string, v []byte) bool {
		switch k {
		case "name":
			name, ok = rawjson.String(v)
		case "arguments":
			args = v
		case "_meta":
			meta = v
		default:
			ok = false // task augmentation or anything newer: the SDK's
		}
		return ok
	}) != nil || !ok || name == "" {
		return false
	}
	v := f.view
	if v.ss == nil || v.ss.InitializeParams() == nil {
		return false // the SDK refuses calls before initialize
	}
	entry, found := v.srv.catalog.Snapshot().Lookup(name)
	if !found || entry.Source != catalog.SourceProxy {
		return false
	}
	var md mcp.Meta
	if meta != nil {
		// Only a progress token and the trace context are taken here;
		// any other _meta (the per-request protocol of 2026-07-28, say)
		// is the SDK's to read.
		if json.Unmarshal(meta, &md) != nil {
			return false
		}
		for k := range md {
			if k != "progressToken" && k != "traceparent" && k != "tracestate" {
				return false
			}
		}
	}
	key := string(m.ID)
	f.mu.Lock()
	if _, dup := f.inflight[key]; dup {
		f.mu.Unlock()
		return false // the SDK answers a reused id as it always did
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.inflight[key] = cancel
	f.mu.Unlock()
	v.sess.Touch()
	c := &router.Call{Entry: entry, Session: v.sess, Args: args, Meta: md, Raw: &router.RawResult{}}
	go func() {
		defer cancel()
		res, err := v.srv.router.Run(ctx, c)
		// The id is free again once answered: a client may reuse it.
		f.mu.Lock()
		delete(f.inflight, key)
		f.mu.Unlock()
		var raw []byte
		if err == nil && res != nil && res == c.Raw.Result {
			raw = c.Raw.Bytes
		}
		stdio.Answer(r, m.ID, res, raw, err)
	}()
	return true
}
