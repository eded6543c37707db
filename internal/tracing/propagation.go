package tracing

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The W3C trace-context keys: HTTP headers, and the same names in a
// request's _meta (MCP 2026-07-28, SEP-414).
const (
	keyTraceparent = "traceparent"
	keyTracestate  = "tracestate"
)

// w3c reads and writes the trace context; a malformed traceparent reads
// as none, so what goes on to a child is always well-formed.
var w3c = propagation.TraceContext{}

// metaCarrier is a request's _meta as the propagator's carrier.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// FromHeader returns ctx carrying the trace context of an HTTP request's
// traceparent and tracestate headers, when they hold one.
func FromHeader(ctx context.Context, h http.Header) context.Context {
	if h.Get(keyTraceparent) == "" {
		return ctx
	}
	return w3c.Extract(ctx, propagation.HeaderCarrier(h))
}

// withClient returns ctx with the trace context of the request's _meta as
// the remote parent, when it holds one: it wins over the HTTP headers'
// (FromHeader), being the request's own.
func withClient(ctx context.Context, meta map[string]any) context.Context {
	if _, ok := meta[keyTraceparent]; !ok {
		return ctx
	}
	return w3c.Extract(ctx, metaCarrier(meta))
}

// Inject returns the trace context a call's request to its child server
// carries in its _meta: the call's own span when export is on (the
// upstream span), else the client's trace context (meta's, else the HTTP
// headers'), passed on unchanged; empty strings when there is none.
func Inject(ctx context.Context, meta map[string]any) (traceparent, tracestate string) {
	if sc := trace.SpanContextFromContext(ctx); !sc.IsValid() || sc.IsRemote() {
		ctx = withClient(ctx, meta)
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return "", ""
	}
	out := metaCarrier{}
	w3c.Inject(ctx, out)
	return out.Get(keyTraceparent), out.Get(keyTracestate)
}
