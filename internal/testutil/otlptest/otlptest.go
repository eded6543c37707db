// Package otlptest is an OTLP/HTTP collector for tests: it decodes the
// protobuf export requests (opentelemetry-proto's collector messages)
// and keeps what it received.
package otlptest

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	colmetric "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Request is one export request as it arrived.
type Request struct {
	Path   string
	Header http.Header
	Gzip   bool
}

// Collector is the collector. A request it cannot decode is answered
// 400 and fails the test at Check.
type Collector struct {
	URL string

	t        testing.TB
	mu       sync.Mutex
	requests []Request
	traces   []*coltrace.ExportTraceServiceRequest
	metrics  []*colmetric.ExportMetricsServiceRequest
	problems []string
}

// New starts a collector, closed with the test.
func New(t testing.TB) *Collector {
	c := &Collector{t: t}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// ServeHTTP takes one export request.
func (c *Collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gz := r.Header.Get("Content-Encoding") == "gzip"
	c.requests = append(c.requests, Request{Path: r.URL.Path, Header: r.Header.Clone(), Gzip: gz})
	var body io.Reader = r.Body
	if gz {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			c.fail(w, "gzip: "+err.Error())
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		c.fail(w, "body: "+err.Error())
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		c.fail(w, "Content-Type "+ct)
		return
	}
	var answer proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		req := &coltrace.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(b, req); err != nil {
			c.fail(w, "traces: "+err.Error())
			return
		}
		c.traces = append(c.traces, req)
		answer = &coltrace.ExportTraceServiceResponse{}
	case "/v1/metrics":
		req := &colmetric.ExportMetricsServiceRequest{}
		if err := proto.Unmarshal(b, req); err != nil {
			c.fail(w, "metrics: "+err.Error())
			return
		}
		c.metrics = append(c.metrics, req)
		answer = &colmetric.ExportMetricsServiceResponse{}
	default:
		w.WriteHeader(http.StatusNotFound)
		return
	}
	out, _ := proto.Marshal(answer)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (c *Collector) fail(w http.ResponseWriter, problem string) {
	c.problems = append(c.problems, problem)
	w.WriteHeader(http.StatusBadRequest)
}

// Check fails the test with every request the collector refused.
func (c *Collector) Check() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.problems {
		c.t.Errorf("collector refused a request: %s", p)
	}
}

// Attrs returns string attributes as a map.
func Attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		if sv, ok := kv.GetValue().GetValue().(*commonpb.AnyValue_StringValue); ok {
			m[kv.GetKey()] = sv.StringValue
		}
	}
	return m
}

// Requests returns the requests received, refused ones included.
func (c *Collector) Requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Request(nil), c.requests...)
}

// Spans returns every span received.
func (c *Collector) Spans() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*tracepb.Span
	for _, req := range c.traces {
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				out = append(out, ss.GetSpans()...)
			}
		}
	}
	return out
}

// Span returns the first span named name, or nil.
func (c *Collector) Span(name string) *tracepb.Span {
	for _, s := range c.Spans() {
		if s.GetName() == name {
			return s
		}
	}
	return nil
}

// TraceResources returns the resource of each trace request.
func (c *Collector) TraceResources() []map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]string
	for _, req := range c.traces {
		for _, rs := range req.GetResourceSpans() {
			out = append(out, Attrs(rs.GetResource().GetAttributes()))
		}
	}
	return out
}

// LastMetrics returns the metrics of the last metrics request, by name:
// the values are cumulative, so the last request holds them all.
func (c *Collector) LastMetrics() map[string]*metricpb.Metric {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]*metricpb.Metric{}
	if len(c.metrics) == 0 {
		return out
	}
	for _, rm := range c.metrics[len(c.metrics)-1].GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				out[m.GetName()] = m
			}
		}
	}
	return out
}
