package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
)

// The attribute keys spans and metrics carry.
const (
	attrTool    = "mcp.tool.name"
	attrSource  = "evokore.tool.source"
	attrServer  = "evokore.server"
	attrSession = "mcp.session.id"
	attrOutcome = "evokore.outcome"
)

// The OTLP enums this exporter uses: OTLP/JSON writes enums as integers.
const (
	kindServer = 2 // SPAN_KIND_SERVER
	kindClient = 3 // SPAN_KIND_CLIENT

	statusOK    = 1 // STATUS_CODE_OK
	statusError = 2 // STATUS_CODE_ERROR

	temporalityCumulative = 2 // AGGREGATION_TEMPORALITY_CUMULATIVE

	// flagsLocalSampled is a span's trace flags (sampled) with the bit
	// that says whether its parent is remote known (it is not).
	flagsLocalSampled = 0x01 | 0x100
)

// scopeName is the instrumentation scope of every span and metric.
const scopeName = "github.com/evokore/evokore/internal/router"

// durationBounds are the histogram's bucket bounds in milliseconds: the
// SDK's defaults, which evokore.tool.duration used before.
var durationBounds = []float64{0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000}

// span is one finished or running span.
type span struct {
	traceID    [16]byte
	spanID     [8]byte
	parentID   [8]byte // zero for a root
	name       string
	kind       int
	start, end time.Time
	attrs      []keyValue
	status     int
	message    string
}

// newSpan starts a span, in parent's trace or, without one, a new trace.
func newSpan(parent *span, name string, kind int, attrs []keyValue) *span {
	s := &span{name: name, kind: kind, attrs: attrs, start: time.Now()}
	if parent != nil {
		s.traceID, s.parentID = parent.traceID, parent.spanID
	} else {
		putRandom(s.traceID[:8])
		putRandom(s.traceID[8:])
	}
	putRandom(s.spanID[:])
	return s
}

// putRandom fills 8 bytes with a random non-zero value: OTLP reads an
// all-zero id as no id.
func putRandom(b []byte) {
	v := rand.Uint64()
	for v == 0 {
		v = rand.Uint64()
	}
	binary.BigEndian.PutUint64(b, v)
}

// finish ends the span with the call's status. The message never quotes
// the error: it may carry a secret.
func (s *span) finish(res *mcp.CallToolResult, err error) {
	s.end = time.Now()
	switch {
	case err != nil:
		s.status, s.message = statusError, "the call failed"
	case res != nil && res.IsError:
		s.status, s.message = statusError, "the tool answered isError"
	default:
		s.status = statusOK
	}
}

// series is one attribute set's cumulative counter and histogram.
type series struct {
	attrs    []keyValue
	calls    uint64
	sum      float64
	min, max float64
	buckets  []uint64 // len(durationBounds)+1
}

// record counts one call of entry and its duration.
func (e *Exporter) record(entry *catalog.Entry, outcome string, ms float64) {
	key := entry.Name + "\x00" + entry.Source.String() + "\x00" + entry.Server + "\x00" + outcome
	e.metricsMu.Lock()
	defer e.metricsMu.Unlock()
	s := e.series[key]
	if s == nil {
		attrs := []keyValue{attr(attrTool, entry.Name), attr(attrSource, entry.Source.String())}
		if entry.Server != "" {
			attrs = append(attrs, attr(attrServer, entry.Server))
		}
		s = &series{attrs: append(attrs, attr(attrOutcome, outcome)), min: ms, max: ms, buckets: make([]uint64, len(durationBounds)+1)}
		e.series[key] = s
	}
	s.calls++
	s.sum += ms
	s.min, s.max = min(s.min, ms), max(s.max, ms)
	// Bucket i holds (bounds[i-1], bounds[i]]; the last one the rest.
	s.buckets[sort.SearchFloat64s(durationBounds, ms)]++
}

// The OTLP/JSON messages, the subset this exporter sends. The encoding
// is protobuf's JSON mapping with OTLP's exceptions: camelCase names,
// trace and span ids as lowercase hex, enums as integers, 64-bit
// integers as decimal strings.
type (
	keyValue struct {
		Key   string   `json:"key"`
		Value anyValue `json:"value"`
	}
	anyValue struct {
		StringValue string `json:"stringValue"`
	}
	resourceJSON struct {
		Attributes []keyValue `json:"attributes"`
	}
	scopeJSON struct {
		Name string `json:"name"`
	}

	traceRequest struct {
		ResourceSpans []resourceSpans `json:"resourceSpans"`
	}
	resourceSpans struct {
		Resource   resourceJSON `json:"resource"`
		ScopeSpans []scopeSpans `json:"scopeSpans"`
	}
	scopeSpans struct {
		Scope scopeJSON  `json:"scope"`
		Spans []spanJSON `json:"spans"`
	}
	spanJSON struct {
		TraceID      string     `json:"traceId"`
		SpanID       string     `json:"spanId"`
		ParentSpanID string     `json:"parentSpanId,omitempty"`
		Flags        uint32     `json:"flags"`
		Name         string     `json:"name"`
		Kind         int        `json:"kind"`
		Start        uint64     `json:"startTimeUnixNano,string"`
		End          uint64     `json:"endTimeUnixNano,string"`
		Attributes   []keyValue `json:"attributes,omitempty"`
		Status       statusJSON `json:"status"`
	}
	statusJSON struct {
		Message string `json:"message,omitempty"`
		Code    int    `json:"code,omitempty"`
	}

	metricsRequest struct {
		ResourceMetrics []resourceMetrics `json:"resourceMetrics"`
	}
	resourceMetrics struct {
		Resource     resourceJSON   `json:"resource"`
		ScopeMetrics []scopeMetrics `json:"scopeMetrics"`
	}
	scopeMetrics struct {
		Scope   scopeJSON    `json:"scope"`
		Metrics []metricJSON `json:"metrics"`
	}
	metricJSON struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Unit        string         `json:"unit,omitempty"`
		Sum         *sumJSON       `json:"sum,omitempty"`
		Histogram   *histogramJSON `json:"histogram,omitempty"`
	}
	sumJSON struct {
		DataPoints             []numberPoint `json:"dataPoints"`
		AggregationTemporality int           `json:"aggregationTemporality"`
		IsMonotonic            bool          `json:"isMonotonic"`
	}
	numberPoint struct {
		Attributes []keyValue `json:"attributes"`
		Start      uint64     `json:"startTimeUnixNano,string"`
		Time       uint64     `json:"timeUnixNano,string"`
		AsInt      uint64     `json:"asInt,string"`
	}
	histogramJSON struct {
		DataPoints             []histogramPoint `json:"dataPoints"`
		AggregationTemporality int              `json:"aggregationTemporality"`
	}
	histogramPoint struct {
		Attributes     []keyValue `json:"attributes"`
		Start          uint64     `json:"startTimeUnixNano,string"`
		Time           uint64     `json:"timeUnixNano,string"`
		Count          uint64     `json:"count,string"`
		Sum            float64    `json:"sum"`
		BucketCounts   []string   `json:"bucketCounts"`
		ExplicitBounds []float64  `json:"explicitBounds"`
		Min            float64    `json:"min"`
		Max            float64    `json:"max"`
	}
)

// attr is a string attribute.
func attr(k, v string) keyValue { return keyValue{k, anyValue{v}} }

// unixNano is t in the OTLP's nanoseconds since the epoch.
func unixNano(t time.Time) uint64 { return uint64(t.UnixNano()) }

// encodeSpans is the export request of one batch.
func encodeSpans(resource []keyValue, batch []*span) []byte {
	spans := make([]spanJSON, len(batch))
	for i, s := range batch {
		spans[i] = spanJSON{
			TraceID: hex.EncodeToString(s.traceID[:]), SpanID: hex.EncodeToString(s.spanID[:]),
			Flags: flagsLocalSampled, Name: s.name, Kind: s.kind,
			Start: unixNano(s.start), End: unixNano(s.end), Attributes: s.attrs,
			Status: statusJSON{Code: s.status, Message: s.message},
		}
		if s.parentID != [8]byte{} {
			spans[i].ParentSpanID = hex.EncodeToString(s.parentID[:])
		}
	}
	b, _ := json.Marshal(traceRequest{[]resourceSpans{{Resource: resourceJSON{resource},
		ScopeSpans: []scopeSpans{{Scope: scopeJSON{scopeName}, Spans: spans}}}}})
	return b
}

// encodeMetrics is the export request of every series at now, or nil
// when there is none.
func (e *Exporter) encodeMetrics(now time.Time) []byte {
	e.metricsMu.Lock()
	keys := make([]string, 0, len(e.series))
	for k := range e.series {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	start, at := unixNano(e.start), unixNano(now)
	calls := make([]numberPoint, 0, len(keys))
	durations := make([]histogramPoint, 0, len(keys))
	for _, k := range keys {
		s := e.series[k]
		calls = append(calls, numberPoint{Attributes: s.attrs, Start: start, Time: at, AsInt: s.calls})
		counts := make([]string, len(s.buckets))
		for i, n := range s.buckets {
			counts[i] = strconv.FormatUint(n, 10)
		}
		durations = append(durations, histogramPoint{Attributes: s.attrs, Start: start, Time: at, Count: s.calls,
			Sum: s.sum, BucketCounts: counts, ExplicitBounds: durationBounds, Min: s.min, Max: s.max})
	}
	e.metricsMu.Unlock()
	if len(keys) == 0 {
		return nil
	}
	b, _ := json.Marshal(metricsRequest{[]resourceMetrics{{Resource: resourceJSON{e.cfg.resource},
		ScopeMetrics: []scopeMetrics{{Scope: scopeJSON{scopeName}, Metrics: []metricJSON{
			{Name: "evokore.tool.calls", Description: "Tool calls dispatched, by tool, source and outcome.",
				Sum: &sumJSON{DataPoints: calls, AggregationTemporality: temporalityCumulative, IsMonotonic: true}},
			{Name: "evokore.tool.duration", Description: "Time from dispatch to answer of a tool call.", Unit: "ms",
				Histogram: &histogramJSON{DataPoints: durations, AggregationTemporality: temporalityCumulative}},
		}}}}}})
	return b
}

// endpoint posts one signal's export requests.
type endpoint struct {
	cfg       signalConfig
	client    *http.Client
	userAgent string
}

// newEndpoint checks the signal's URL and builds its client.
func newEndpoint(signal string, c signalConfig, version string) (*endpoint, error) {
	u, err := url.Parse(c.url)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("the OTLP %s endpoint is not an http(s) URL", signal)
	}
	rt, err := c.transport()
	if err != nil {
		return nil, err
	}
	return &endpoint{cfg: c, client: &http.Client{Transport: rt}, userAgent: "evokore/" + version}, nil
}

// Retries: the specification's retryable answers, with a backoff that
// doubles from retryFirst up to retryMax, for retryFor at most.
const (
	retryFirst = time.Second
	retryMax   = 16 * time.Second
	retryFor   = time.Minute
)

// post sends one export request, retrying while the collector says it is
// worth it and ctx allows.
func (ep *endpoint) post(ctx context.Context, body []byte) error {
	if ep.cfg.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = buf.Bytes()
	}
	giveUp := time.Now().Add(retryFor)
	backoff := retryFirst
	for {
		retry, wait, err := ep.attempt(ctx, body)
		if err == nil || !retry || ctx.Err() != nil {
			return err
		}
		if wait <= 0 {
			wait, backoff = backoff, min(2*backoff, retryMax)
		}
		if time.Now().Add(wait).After(giveUp) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// attempt posts once, and says whether a failure is worth a retry and
// how long the collector asked to wait.
func (ep *endpoint) attempt(ctx context.Context, body []byte) (retry bool, wait time.Duration, err error) {
	actx, cancel := context.WithTimeout(ctx, ep.cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, ep.cfg.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", ep.userAgent)
	if ep.cfg.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for _, h := range ep.cfg.headers {
		req.Header.Set(h[0], h[1])
	}
	resp, err := ep.client.Do(req)
	if err != nil {
		// The URL is left out of the message: it may carry a token.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return true, 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return false, 0, nil
	}
	err = fmt.Errorf("the collector answered %s", resp.Status)
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, retryAfter(resp.Header.Get("Retry-After")), err
	}
	return false, 0, err
}

// retryAfter is a Retry-After header's delay in seconds, capped so a
// collector cannot hold the queue for long; zero when absent.
func retryAfter(h string) time.Duration {
	if n, err := strconv.Atoi(h); err == nil && n > 0 {
		return min(time.Duration(n)*time.Second, retryMax)
	}
	return 0
}
