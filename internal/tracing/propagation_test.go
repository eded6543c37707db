package tracing_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/evokore/evokore/internal/tracing"
)

const (
	clientParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	headerParent = "00-11111111111111111111111111111111-2222222222222222-01"
)

// With export off, the client's trace context goes on to the child as
// it came: _meta's over the HTTP headers', a malformed one not at all.
func TestInjectPassesTheClientsContextOn(t *testing.T) {
	ctx := context.Background()
	meta := map[string]any{"traceparent": clientParent, "tracestate": "vendor=opaque", "progressToken": 7}
	if tp, ts := tracing.Inject(ctx, meta); tp != clientParent || ts != "vendor=opaque" {
		t.Errorf("from _meta: %q %q", tp, ts)
	}
	fromHeader := tracing.FromHeader(ctx, http.Header{"Traceparent": {headerParent}})
	if tp, _ := tracing.Inject(fromHeader, nil); tp != headerParent {
		t.Errorf("from the header: %q", tp)
	}
	if tp, _ := tracing.Inject(fromHeader, meta); tp != clientParent {
		t.Errorf("_meta and header: %q, want _meta's", tp)
	}
	for _, bad := range []any{"00-zz-b7ad6b7169203331-01", "00-00000000000000000000000000000000-b7ad6b7169203331-01", 42, `"}` + "\n"} {
		if tp, ts := tracing.Inject(ctx, map[string]any{"traceparent": bad, "tracestate": "a=b"}); tp != "" || ts != "" {
			t.Errorf("malformed %q passed on as %q %q", bad, tp, ts)
		}
	}
	if tp, ts := tracing.Inject(ctx, nil); tp != "" || ts != "" {
		t.Errorf("no context: %q %q", tp, ts)
	}
}

// What a proxied call pays for trace context when the client sent none
// and export is off: the common case on the fast path.
func BenchmarkInjectWithoutContext(b *testing.B) {
	ctx, meta := context.Background(), map[string]any{"progressToken": 1}
	b.ReportAllocs()
	for b.Loop() {
		tracing.Inject(ctx, meta)
	}
}

// A client's traceparent passed on with export off.
func BenchmarkInjectPassThrough(b *testing.B) {
	ctx, meta := context.Background(), map[string]any{"traceparent": clientParent}
	b.ReportAllocs()
	for b.Loop() {
		tracing.Inject(ctx, meta)
	}
}
