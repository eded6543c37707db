package server_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/testutil/otlptest"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// With OTEL_EXPORTER_OTLP_ENDPOINT set, each tool call is a span, a
// proxied call has a child span for the upstream call in the same trace,
// and the call metrics reach the collector; the OTEL_* headers,
// compression and resource variables shape the requests. A call whose
// _meta carries the client's traceparent continues the client's trace,
// and the child's request carries the upstream span in its _meta.
func TestOTLPSpansNestTheUpstreamCall(t *testing.T) {
	col := otlptest.New(t)
	for k, v := range map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":           col.URL,
		"OTEL_EXPORTER_OTLP_HEADERS":            "Authorization=Bearer%20tok, X-Tenant=acme",
		"OTEL_EXPORTER_OTLP_METRICS_HEADERS":    "X-Signal=metrics",
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip",
		"OTEL_RESOURCE_ATTRIBUTES":              "deployment.environment=test",
	} {
		t.Setenv(k, v) // the SDK reads the process environment
	}
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	cs := h.Connect(nil)
	h.Booted()
	routertest.Call(t, cs, "fx_echo", map[string]any{"message": "traced"})
	routertest.Call(t, cs, "claim_list", map[string]any{})
	if res := routertest.Call(t, cs, "fx_fail", map[string]any{"message": "x"}); !res.IsError {
		t.Fatal("fx_fail did not fail")
	}
	const clientTrace, clientSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx_meta", Arguments: map[string]any{},
		Meta: mcp.Meta{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01", "tracestate": "vendor=opaque"}})
	if err != nil || res.IsError {
		t.Fatalf("fx_meta: %v %v", res, err)
	}
	// The new era's _meta triple (the client's capabilities) is there too.
	var childMeta map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &childMeta); err != nil {
		t.Fatal(err)
	}
	// Shutdown flushes the batches.
	_ = h.Server.Close()
	col.Check()

	call, up := col.Span("tools/call fx_echo"), col.Span("upstream fx/echo")
	if call == nil || up == nil {
		t.Fatalf("spans missing: %v", col.Spans())
	}
	if string(up.TraceId) != string(call.TraceId) || string(up.ParentSpanId) != string(call.SpanId) {
		t.Errorf("upstream span is not the call span's child: trace %x/%x parent %x, call span %x", up.TraceId, call.TraceId, up.ParentSpanId, call.SpanId)
	}
	if len(call.ParentSpanId) != 0 || call.Kind != tracepb.Span_SPAN_KIND_SERVER || up.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("kinds/parents: call %v parent %x, upstream %v", call.Kind, call.ParentSpanId, up.Kind)
	}
	if up.StartTimeUnixNano < call.StartTimeUnixNano || up.EndTimeUnixNano > call.EndTimeUnixNano || call.StartTimeUnixNano == 0 {
		t.Error("the upstream span is not inside the call span")
	}
	if a := otlptest.Attrs(call.Attributes); a["mcp.tool.name"] != "fx_echo" || a["evokore.server"] != "fx" || a["evokore.tool.source"] != "proxy" || a["mcp.session.id"] == "" {
		t.Errorf("call span attributes: %v", a)
	}
	if call.Status.GetCode() != tracepb.Status_STATUS_CODE_OK || up.Status.GetCode() != tracepb.Status_STATUS_CODE_OK {
		t.Errorf("ok call's status: %v, upstream %v", call.Status, up.Status)
	}
	native := col.Span("tools/call claim_list")
	if native == nil || col.Span("upstream /claim_list") != nil || string(native.TraceId) == string(call.TraceId) {
		t.Errorf("native call span: %v", native)
	}
	if f := col.Span("tools/call fx_fail"); f == nil || f.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("failed call span: %v", f)
	}
	for _, res := range col.TraceResources() {
		if res["service.name"] != "evokore" || res["deployment.environment"] != "test" {
			t.Errorf("resource: %v", res)
		}
	}

	// The client's trace, continued and passed on.
	metaCall, metaUp := col.Span("tools/call fx_meta"), col.Span("upstream fx/meta")
	if metaCall == nil || metaUp == nil {
		t.Fatalf("fx_meta spans missing")
	}
	if hex.EncodeToString(metaCall.TraceId) != clientTrace || hex.EncodeToString(metaCall.ParentSpanId) != clientSpan {
		t.Errorf("the call span does not continue the client's trace: trace %x parent %x", metaCall.TraceId, metaCall.ParentSpanId)
	}
	want := "00-" + clientTrace + "-" + hex.EncodeToString(metaUp.SpanId) + "-01"
	if childMeta["traceparent"] != want || childMeta["tracestate"] != "vendor=opaque" {
		t.Errorf("the child's _meta: %v, want traceparent %s", childMeta, want)
	}

	m := col.LastMetrics()
	calls, dur := m["evokore.tool.calls"], m["evokore.tool.duration"]
	if calls.GetSum() == nil || !calls.GetSum().IsMonotonic || dur.GetHistogram() == nil || dur.GetUnit() != "ms" {
		t.Fatalf("metrics = %v", m)
	}
	counts := map[string]int64{}
	for _, p := range calls.GetSum().DataPoints {
		a := otlptest.Attrs(p.Attributes)
		counts[a["mcp.tool.name"]+"/"+a["evokore.outcome"]] = p.GetAsInt()
	}
	if counts["fx_echo/ok"] != 1 || counts["claim_list/ok"] != 1 || counts["fx_fail/error"] != 1 {
		t.Errorf("evokore.tool.calls = %v", counts)
	}
	for _, p := range dur.GetHistogram().DataPoints {
		var n uint64
		for _, c := range p.BucketCounts {
			n += c
		}
		if p.Count != 1 || n != p.Count || len(p.BucketCounts) != len(p.ExplicitBounds)+1 {
			t.Errorf("duration point: %v", p)
		}
	}

	var traces, metrics int
	for _, r := range col.Requests() {
		switch r.Path {
		case "/v1/traces":
			traces++
			if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("X-Tenant") != "acme" || !r.Gzip {
				t.Errorf("trace request headers: %v (gzip %v)", r.Header, r.Gzip)
			}
		case "/v1/metrics":
			metrics++
			// The signal's own variable replaces the general one.
			if r.Header.Get("X-Signal") != "metrics" || r.Header.Get("Authorization") != "" || r.Gzip {
				t.Errorf("metric request headers: %v (gzip %v)", r.Header, r.Gzip)
			}
		}
	}
	if traces == 0 || metrics == 0 {
		t.Errorf("requests: %d traces, %d metrics", traces, metrics)
	}
}

// Over streamable HTTP, with export off, the trace context of the
// request's traceparent and tracestate headers reaches the child's
// _meta unchanged.
func TestTraceparentHeaderReachesTheChild(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	ts := httptest.NewServer(h.HTTP(func(*http.Request) ingress.SessionOptions { return ingress.SessionOptions{} }, nil))
	t.Cleanup(ts.Close)
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	hc := &http.Client{Transport: headers{set: map[string]string{"traceparent": parent, "tracestate": "congo=t61rcWkgMzE"}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "traced", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	h.Booted()
	res := routertest.Call(t, cs, "fx_meta", map[string]any{})
	// The new era's _meta triple (the client's capabilities) is there too.
	var childMeta map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &childMeta); err != nil {
		t.Fatal(err)
	}
	if childMeta["traceparent"] != parent || childMeta["tracestate"] != "congo=t61rcWkgMzE" {
		t.Errorf("the child's _meta: %v", childMeta)
	}
}

// headers adds headers to every request of a client.
type headers struct{ set map[string]string }

func (h headers) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.set {
		req.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(req)
}
