// Package otlptest is an OTLP/HTTP collector for tests: it takes the JSON
// encoding, checks it against the specification's rules, and keeps what
// it received.
//
// The message types below are written from the OTLP protobuf definitions
// (opentelemetry-proto, trace/v1 and metrics/v1), not from evokore's
// exporter, so a field the exporter misspells is refused rather than
// agreed with: decoding disallows unknown fields, every key must be
// lowerCamelCase (encoding/json alone matches names case-insensitively),
// 64-bit integers must be strings, enums numbers, and ids lowercase hex
// of their exact length.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
)

// KeyValue is an attribute; only string values are expected.
type KeyValue struct {
	Key   string `json:"key"`
	Value struct {
		StringValue *string `json:"stringValue"`
	} `json:"value"`
}

// Attrs returns attributes as a map.
func Attrs(kvs []KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		if kv.Value.StringValue != nil {
			m[kv.Key] = *kv.Value.StringValue
		}
	}
	return m
}

// Resource is the resource of a request.
type Resource struct {
	Attributes             []KeyValue `json:"attributes"`
	DroppedAttributesCount uint32     `json:"droppedAttributesCount"`
}

// Scope is an instrumentation scope.
type Scope struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Span is opentelemetry.proto.trace.v1.Span, less events and links.
type Span struct {
	TraceID           string     `json:"traceId"`
	SpanID            string     `json:"spanId"`
	TraceState        string     `json:"traceState"`
	ParentSpanID      string     `json:"parentSpanId"`
	Flags             uint32     `json:"flags"`
	Name              string     `json:"name"`
	Kind              int        `json:"kind"`
	StartTimeUnixNano string     `json:"startTimeUnixNano"`
	EndTimeUnixNano   string     `json:"endTimeUnixNano"`
	Attributes        []KeyValue `json:"attributes"`
	Status            struct {
		Message string `json:"message"`
		Code    int    `json:"code"`
	} `json:"status"`
}

// Start is the span's start in nanoseconds.
func (s Span) Start() uint64 { n, _ := strconv.ParseUint(s.StartTimeUnixNano, 10, 64); return n }

// End is the span's end in nanoseconds.
func (s Span) End() uint64 { n, _ := strconv.ParseUint(s.EndTimeUnixNano, 10, 64); return n }

// TraceRequest is ExportTraceServiceRequest.
type TraceRequest struct {
	ResourceSpans []struct {
		Resource   Resource `json:"resource"`
		ScopeSpans []struct {
			Scope     Scope  `json:"scope"`
			Spans     []Span `json:"spans"`
			SchemaURL string `json:"schemaUrl"`
		} `json:"scopeSpans"`
		SchemaURL string `json:"schemaUrl"`
	} `json:"resourceSpans"`
}

// NumberPoint is NumberDataPoint (integer values).
type NumberPoint struct {
	Attributes        []KeyValue `json:"attributes"`
	StartTimeUnixNano string     `json:"startTimeUnixNano"`
	TimeUnixNano      string     `json:"timeUnixNano"`
	AsInt             string     `json:"asInt"`
	Flags             uint32     `json:"flags"`
}

// HistogramPoint is HistogramDataPoint.
type HistogramPoint struct {
	Attributes        []KeyValue `json:"attributes"`
	StartTimeUnixNano string     `json:"startTimeUnixNano"`
	TimeUnixNano      string     `json:"timeUnixNano"`
	Count             string     `json:"count"`
	Sum               *float64   `json:"sum"`
	BucketCounts      []string   `json:"bucketCounts"`
	ExplicitBounds    []float64  `json:"explicitBounds"`
	Flags             uint32     `json:"flags"`
	Min               *float64   `json:"min"`
	Max               *float64   `json:"max"`
}

// Metric is opentelemetry.proto.metrics.v1.Metric, sums and histograms.
type Metric struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Unit        string `json:"unit"`
	Sum         *struct {
		DataPoints             []NumberPoint `json:"dataPoints"`
		AggregationTemporality int           `json:"aggregationTemporality"`
		IsMonotonic            bool          `json:"isMonotonic"`
	} `json:"sum"`
	Histogram *struct {
		DataPoints             []HistogramPoint `json:"dataPoints"`
		AggregationTemporality int              `json:"aggregationTemporality"`
	} `json:"histogram"`
}

// MetricsRequest is ExportMetricsServiceRequest.
type MetricsRequest struct {
	ResourceMetrics []struct {
		Resource     Resource `json:"resource"`
		ScopeMetrics []struct {
			Scope     Scope    `json:"scope"`
			Metrics   []Metric `json:"metrics"`
			SchemaURL string   `json:"schemaUrl"`
		} `json:"scopeMetrics"`
		SchemaURL string `json:"schemaUrl"`
	} `json:"resourceMetrics"`
}

// Request is one export request as it arrived.
type Request struct {
	Path   string
	Header http.Header
	Gzip   bool
}

// Collector is the stub. Answer, when set, picks the status of each
// request (1-based); the default is 200.
type Collector struct {
	URL    string
	Answer func(n int, r *http.Request) int

	t        testing.TB
	mu       sync.Mutex
	requests []Request
	traces   []TraceRequest
	metrics  []MetricsRequest
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
	c.requests = append(c.requests, Request{Path: r.URL.Path, Header: r.Header.Clone(), Gzip: r.Header.Get("Content-Encoding") == "gzip"})
	if c.Answer != nil {
		if code := c.Answer(len(c.requests), r); code != http.StatusOK {
			w.WriteHeader(code)
			return
		}
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			c.fail(w, "gzip: %v", err)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		c.fail(w, "body: %v", err)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		c.fail(w, "Content-Type %q", ct)
		return
	}
	if err := checkKeys(b); err != nil {
		c.fail(w, "%s: %v", r.URL.Path, err)
		return
	}
	switch r.URL.Path {
	case "/v1/traces":
		var req TraceRequest
		if err := strict(b, &req); err != nil {
			c.fail(w, "traces: %v\n%s", err, b)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					if err := checkSpan(s); err != nil {
						c.fail(w, "span %q: %v", s.Name, err)
						return
					}
				}
			}
		}
		c.traces = append(c.traces, req)
	case "/v1/metrics":
		var req MetricsRequest
		if err := strict(b, &req); err != nil {
			c.fail(w, "metrics: %v\n%s", err, b)
			return
		}
		c.metrics = append(c.metrics, req)
	default:
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}"))
}

// fail answers 400 and keeps the problem for Check.
func (c *Collector) fail(w http.ResponseWriter, format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
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

// strict decodes b into v refusing unknown fields.
func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

var (
	camel   = regexp.MustCompile(`^[a-z][a-zA-Z]*$`)
	traceID = regexp.MustCompile(`^[0-9a-f]{32}$`)
	spanID  = regexp.MustCompile(`^[0-9a-f]{16}$`)
	decimal = regexp.MustCompile(`^[0-9]+$`)
)

// checkKeys refuses a key that is not lowerCamelCase, at any depth.
func checkKeys(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var walk func(any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if !camel.MatchString(k) {
					return fmt.Errorf("key %q is not lowerCamelCase", k)
				}
				if err := walk(e); err != nil {
					return err
				}
			}
		case []any:
			for _, e := range v {
				if err := walk(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v)
}

// checkSpan applies the OTLP/JSON rules for ids and times.
func checkSpan(s Span) error {
	switch {
	case !traceID.MatchString(s.TraceID) || s.TraceID == "00000000000000000000000000000000":
		return fmt.Errorf("traceId %q", s.TraceID)
	case !spanID.MatchString(s.SpanID) || s.SpanID == "0000000000000000":
		return fmt.Errorf("spanId %q", s.SpanID)
	case s.ParentSpanID != "" && !spanID.MatchString(s.ParentSpanID):
		return fmt.Errorf("parentSpanId %q", s.ParentSpanID)
	case !decimal.MatchString(s.StartTimeUnixNano) || !decimal.MatchString(s.EndTimeUnixNano):
		return fmt.Errorf("times %q %q", s.StartTimeUnixNano, s.EndTimeUnixNano)
	}
	return nil
}

// Requests returns the requests received, refused ones included.
func (c *Collector) Requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Request(nil), c.requests...)
}

// Spans returns every span received.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Span
	for _, req := range c.traces {
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				out = append(out, ss.Spans...)
			}
		}
	}
	return out
}

// Span returns the first span named name, or nil.
func (c *Collector) Span(name string) *Span {
	for _, s := range c.Spans() {
		if s.Name == name {
			return &s
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
		for _, rs := range req.ResourceSpans {
			out = append(out, Attrs(rs.Resource.Attributes))
		}
	}
	return out
}

// LastMetrics returns the metrics of the last metrics request, by name:
// the values are cumulative, so the last request holds them all.
func (c *Collector) LastMetrics() map[string]Metric {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]Metric{}
	if len(c.metrics) == 0 {
		return out
	}
	for _, rm := range c.metrics[len(c.metrics)-1].ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				out[m.Name] = m
			}
		}
	}
	return out
}
