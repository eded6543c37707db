package server_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	colmetric "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// otlpCollector is an OTLP/HTTP collector stub: it decodes the protobuf
// export requests and keeps the spans and metric names.
type otlpCollector struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics map[string]bool
}

func (c *otlpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, _ := io.ReadAll(body)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch r.URL.Path {
	case "/v1/traces":
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	case "/v1/metrics":
		var req colmetric.ExportMetricsServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					c.metrics[m.Name] = true
				}
			}
		}
		out, _ := proto.Marshal(&colmetric.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (c *otlpCollector) span(name string) *tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.spans {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, each tool call is a span, a
// proxied call has a child span for the upstream call in the same trace,
// and the call metrics reach the collector.
func TestOTLPSpansNestTheUpstreamCall(t *testing.T) {
	col := &otlpCollector{metrics: map[string]bool{}}
	srv := httptest.NewServer(col)
	defer srv.Close()
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL})
	cs := h.Connect(nil)
	h.Booted()
	routertest.Call(t, cs, "fx_echo", map[string]any{"message": "traced"})
	routertest.Call(t, cs, "claim_list", map[string]any{})
	if res := routertest.Call(t, cs, "fx_fail", map[string]any{"message": "x"}); !res.IsError {
		t.Fatal("fx_fail did not fail")
	}
	// Shutdown flushes the batches.
	_ = h.Server.Close()

	call, up := col.span("tools/call fx_echo"), col.span("upstream fx/echo")
	if call == nil || up == nil {
		t.Fatalf("spans missing: %v", col.spans)
	}
	if !bytes.Equal(up.TraceId, call.TraceId) || !bytes.Equal(up.ParentSpanId, call.SpanId) {
		t.Errorf("upstream span is not the call span's child: trace %x/%x parent %x, call span %x", up.TraceId, call.TraceId, up.ParentSpanId, call.SpanId)
	}
	if len(call.ParentSpanId) != 0 || call.Kind != tracepb.Span_SPAN_KIND_SERVER || up.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("kinds/parents: call %v parent %x, upstream %v", call.Kind, call.ParentSpanId, up.Kind)
	}
	if up.StartTimeUnixNano < call.StartTimeUnixNano || up.EndTimeUnixNano > call.EndTimeUnixNano {
		t.Error("the upstream span is not inside the call span")
	}
	native := col.span("tools/call claim_list")
	if native == nil || col.span("upstream /claim_list") != nil {
		t.Errorf("native call span: %v", native)
	}
	if f := col.span("tools/call fx_fail"); f == nil || f.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("failed call span: %v", f)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if !col.metrics["evokore.tool.calls"] || !col.metrics["evokore.tool.duration"] {
		t.Errorf("metrics = %v", col.metrics)
	}
}
