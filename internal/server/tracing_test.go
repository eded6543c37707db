package server_test

import (
	"strconv"
	"testing"

	"github.com/evokore/evokore/internal/testutil/otlptest"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// With OTEL_EXPORTER_OTLP_ENDPOINT set, each tool call is a span, a
// proxied call has a child span for the upstream call in the same trace,
// and the call metrics reach the collector; the OTEL_* headers,
// compression and resource variables shape the requests.
func TestOTLPSpansNestTheUpstreamCall(t *testing.T) {
	col := otlptest.New(t)
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":           col.URL,
		"OTEL_EXPORTER_OTLP_HEADERS":            "Authorization=Bearer%20tok, X-Tenant=acme",
		"OTEL_EXPORTER_OTLP_METRICS_HEADERS":    "X-Signal=metrics",
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip",
		"OTEL_RESOURCE_ATTRIBUTES":              "deployment.environment=test",
	})
	cs := h.Connect(nil)
	h.Booted()
	routertest.Call(t, cs, "fx_echo", map[string]any{"message": "traced"})
	routertest.Call(t, cs, "claim_list", map[string]any{})
	if res := routertest.Call(t, cs, "fx_fail", map[string]any{"message": "x"}); !res.IsError {
		t.Fatal("fx_fail did not fail")
	}
	// Shutdown flushes the batches.
	_ = h.Server.Close()
	col.Check()

	call, up := col.Span("tools/call fx_echo"), col.Span("upstream fx/echo")
	if call == nil || up == nil {
		t.Fatalf("spans missing: %v", col.Spans())
	}
	if up.TraceID != call.TraceID || up.ParentSpanID != call.SpanID {
		t.Errorf("upstream span is not the call span's child: trace %s/%s parent %s, call span %s", up.TraceID, call.TraceID, up.ParentSpanID, call.SpanID)
	}
	const server, client, statusOK, statusError = 2, 3, 1, 2
	if call.ParentSpanID != "" || call.Kind != server || up.Kind != client {
		t.Errorf("kinds/parents: call %v parent %q, upstream %v", call.Kind, call.ParentSpanID, up.Kind)
	}
	if up.Start() < call.Start() || up.End() > call.End() || call.Start() == 0 {
		t.Error("the upstream span is not inside the call span")
	}
	if a := otlptest.Attrs(call.Attributes); a["mcp.tool.name"] != "fx_echo" || a["evokore.server"] != "fx" || a["evokore.tool.source"] != "proxy" || a["mcp.session.id"] == "" {
		t.Errorf("call span attributes: %v", a)
	}
	if call.Status.Code != statusOK || up.Status.Code != statusOK {
		t.Errorf("ok call's status: %v, upstream %v", call.Status, up.Status)
	}
	native := col.Span("tools/call claim_list")
	if native == nil || col.Span("upstream /claim_list") != nil || native.TraceID == call.TraceID {
		t.Errorf("native call span: %v", native)
	}
	if f := col.Span("tools/call fx_fail"); f == nil || f.Status.Code != statusError {
		t.Errorf("failed call span: %v", f)
	}
	for _, res := range col.TraceResources() {
		if res["service.name"] != "evokore" || res["deployment.environment"] != "test" {
			t.Errorf("resource: %v", res)
		}
	}

	m := col.LastMetrics()
	calls, dur := m["evokore.tool.calls"], m["evokore.tool.duration"]
	if calls.Sum == nil || !calls.Sum.IsMonotonic || calls.Sum.AggregationTemporality != 2 || dur.Histogram == nil || dur.Unit != "ms" {
		t.Fatalf("metrics = %+v", m)
	}
	counts := map[string]string{}
	for _, p := range calls.Sum.DataPoints {
		a := otlptest.Attrs(p.Attributes)
		counts[a["mcp.tool.name"]+"/"+a["evokore.outcome"]] = p.AsInt
	}
	if counts["fx_echo/ok"] != "1" || counts["claim_list/ok"] != "1" || counts["fx_fail/error"] != "1" {
		t.Errorf("evokore.tool.calls = %v", counts)
	}
	for _, p := range dur.Histogram.DataPoints {
		var n uint64
		for _, c := range p.BucketCounts {
			v, _ := strconv.ParseUint(c, 10, 64)
			n += v
		}
		if p.Count != "1" || strconv.FormatUint(n, 10) != p.Count || len(p.BucketCounts) != len(p.ExplicitBounds)+1 {
			t.Errorf("duration point: %+v", p)
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
