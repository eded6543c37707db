package main_test

import (
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/evokore/evokore/internal/testutil/otlptest"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

const (
	clientTrace  = "0af7651916cd43dd8448eb211c80319c"
	clientSpan   = "b7ad6b7169203331"
	clientParent = "00-" + clientTrace + "-" + clientSpan + "-01"
)

// metaCall calls c_meta over raw stdio with the client's trace context
// in _meta and returns the _meta the child received.
func metaCall(t *testing.T, r *fastRouter) map[string]string {
	t.Helper()
	r.send(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"c_meta","arguments":{},"_meta":{"traceparent":"`+clientParent+`","tracestate":"vendor=opaque","progressToken":"p1"}}}`)
	res := resultOf(t, r.response(t))
	var meta map[string]any
	if len(res.Content) != 1 || json.Unmarshal([]byte(res.Content[0].Text), &meta) != nil {
		t.Fatalf("c_meta answered %+v", res)
	}
	out := map[string]string{}
	for k, v := range meta {
		s, _ := v.(string)
		out[k] = s
	}
	return out
}

// Over raw stdio (the fast path), with export off, the client's
// _meta.traceparent and tracestate reach the child unchanged, beside the
// router's own progress token.
func TestFastPathPassesTheClientsTraceContextOn(t *testing.T) {
	r := startFastRouterWith(t, fastRouterOptions{childArgs: []string{}, readyTool: "c_meta", buffered: true})
	meta := metaCall(t, r)
	if meta["traceparent"] != clientParent || meta["tracestate"] != "vendor=opaque" || meta["progressToken"] == "" {
		t.Errorf("the child's _meta: %v", meta)
	}
}

// With OTLP export on, the call span continues the client's trace, and
// the child's request carries the upstream span as its parent; the
// collector (OTLP/HTTP protobuf, the default protocol) receives both.
func TestFastPathCallSpanContinuesTheClientsTrace(t *testing.T) {
	col := otlptest.New(t)
	r := startFastRouterWith(t, fastRouterOptions{childArgs: []string{}, readyTool: "c_meta", buffered: true,
		env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.URL, "OTEL_BSP_SCHEDULE_DELAY=10"}})
	meta := metaCall(t, r)
	routertest.WaitFor(t, "the call's spans", func() bool {
		return col.Span("tools/call c_meta") != nil && col.Span("upstream c/meta") != nil
	})
	col.Check()
	call, up := col.Span("tools/call c_meta"), col.Span("upstream c/meta")
	if hex.EncodeToString(call.TraceId) != clientTrace || hex.EncodeToString(call.ParentSpanId) != clientSpan {
		t.Errorf("call span: trace %x parent %x, want the client's %s %s", call.TraceId, call.ParentSpanId, clientTrace, clientSpan)
	}
	if string(up.ParentSpanId) != string(call.SpanId) {
		t.Errorf("the upstream span's parent %x is not the call span %x", up.ParentSpanId, call.SpanId)
	}
	if want := "00-" + clientTrace + "-" + hex.EncodeToString(up.SpanId) + "-01"; meta["traceparent"] != want || meta["tracestate"] != "vendor=opaque" {
		t.Errorf("the child's _meta: %v, want traceparent %s", meta, want)
	}
}
