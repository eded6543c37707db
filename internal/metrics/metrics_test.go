package metrics_test

import (
	"context"
	"errors"
	"math"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/metrics"
	"github.com/evokore/evokore/internal/router"
)

// scrape serves /metrics once, as a scraper that asks for nothing in
// particular gets it, and parses the text format.
func scrape(t *testing.T, m *metrics.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); expfmt.ResponseFormat(rec.Header()).FormatType() != expfmt.TypeTextPlain {
		t.Fatalf("Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("the scrape does not parse: %v", err)
	}
	return fams
}

// value is the value of the family's series with exactly these labels.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.Label {
			if v, ok := labels[l.GetName()]; !ok || v != l.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// Calls are counted by tool, server and outcome; stage refusals by
// reason; the gauges read their functions at scrape time.
func TestCountsCallsRejectionsAndGauges(t *testing.T) {
	sessions := 3
	m := metrics.New(metrics.Gauges{Sessions: func() int { return sessions }, ChildrenUp: func() int { return 2 }, PendingApprovals: func() int { return 1 }})
	c := &router.Call{Entry: &catalog.Entry{Name: "fx_echo", Server: "fx"}, Started: time.Now()}
	m.Observe(context.Background(), router.Outcome{Call: c, Result: &mcp.CallToolResult{}, Err: nil})
	m.Observe(context.Background(), router.Outcome{Call: c, Result: &mcp.CallToolResult{IsError: true}, Err: nil})
	m.Observe(context.Background(), router.Outcome{Call: c, Result: nil, Err: errors.New("boom")})
	refuse := m.Counting("rate_limit", router.StageFunc(func(context.Context, *router.Call) (*mcp.CallToolResult, error) {
		return nil, errors.New("Rate limit exceeded")
	}))
	pass := m.Counting("cooldown", router.StageFunc(func(context.Context, *router.Call) (*mcp.CallToolResult, error) { return nil, nil }))
	_, _ = refuse.Check(context.Background(), c)
	_, _ = pass.Check(context.Background(), c)
	sessions = 5
	fams := scrape(t, m)
	for _, want := range []struct {
		name   string
		labels map[string]string
		value  float64
	}{
		{"evokore_tool_calls_total", map[string]string{"tool": "fx_echo", "server": "fx", "outcome": "ok"}, 1},
		{"evokore_tool_calls_total", map[string]string{"tool": "fx_echo", "server": "fx", "outcome": "error"}, 1},
		{"evokore_tool_calls_total", map[string]string{"tool": "fx_echo", "server": "fx", "outcome": "fail"}, 1},
		{"evokore_tool_call_duration_seconds", map[string]string{"server": "fx"}, 3},
		{"evokore_call_rejections_total", map[string]string{"reason": "rate_limit"}, 1},
		// A stage that let the call through counts nothing, but its
		// series is there to be graphed.
		{"evokore_call_rejections_total", map[string]string{"reason": "cooldown"}, 0},
		{"evokore_sessions", nil, 5},
		{"evokore_children_up", nil, 2},
		{"evokore_pending_approvals", nil, 1},
	} {
		if v, ok := value(fams, want.name, want.labels); !ok || v != want.value {
			t.Errorf("%s%v = %v (present %v), want %v", want.name, want.labels, v, ok, want.value)
		}
	}
	types := map[string]dto.MetricType{
		"evokore_tool_calls_total": dto.MetricType_COUNTER, "evokore_call_rejections_total": dto.MetricType_COUNTER,
		"evokore_tool_call_duration_seconds": dto.MetricType_HISTOGRAM, "evokore_sessions": dto.MetricType_GAUGE,
	}
	for name, typ := range types {
		if f := fams[name]; f == nil || f.GetType() != typ || f.GetHelp() == "" {
			t.Errorf("%s: %v", name, f)
		}
	}
}

// Gauges whose function is nil are left out rather than reported as 0.
func TestAbsentGaugesAreLeftOut(t *testing.T) {
	fams := scrape(t, metrics.New(metrics.Gauges{}))
	for _, name := range []string{"evokore_sessions", "evokore_children_up", "evokore_pending_approvals"} {
		if fams[name] != nil {
			t.Errorf("%s reported without a function", name)
		}
	}
}

// Tool names holding the characters the format escapes read back as
// they were, and the duration histogram's buckets are cumulative with
// the documented bounds.
func TestLabelValuesAndBucketsReadBack(t *testing.T) {
	m := metrics.New(metrics.Gauges{})
	odd := "a\"b\\c\nd"
	m.Observe(context.Background(), router.Outcome{Call: &router.Call{Entry: &catalog.Entry{Name: odd, Server: odd}, Started: time.Now().Add(-2 * time.Second)}, Result: &mcp.CallToolResult{}})
	fams := scrape(t, m)
	if v, ok := value(fams, "evokore_tool_calls_total", map[string]string{"tool": odd, "server": odd, "outcome": "ok"}); !ok || v != 1 {
		t.Errorf("escaped tool name: %v %v", v, ok)
	}
	h := fams["evokore_tool_call_duration_seconds"].GetMetric()[0].GetHistogram()
	var bounds []float64
	for _, b := range h.Bucket {
		bounds = append(bounds, b.GetUpperBound())
		want := uint64(0)
		if b.GetUpperBound() >= 2 {
			want = 1
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v holds %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
	if len(bounds) != 17 || bounds[0] != .0005 || bounds[15] != 60 || !math.IsInf(bounds[16], 1) || h.GetSampleCount() != 1 || h.GetSampleSum() < 2 {
		t.Errorf("buckets %v, count %d, sum %v", bounds, h.GetSampleCount(), h.GetSampleSum())
	}
}

// The runtime's and (on Linux) the process's series, under the names
// dashboards built for the Go client expect.
func TestRuntimeAndProcessSeries(t *testing.T) {
	fams := scrape(t, metrics.New(metrics.Gauges{}))
	want := []string{"go_goroutines", "go_info", "go_memstats_alloc_bytes", "go_memstats_heap_alloc_bytes",
		"go_memstats_sys_bytes", "go_threads", "go_gc_duration_seconds"}
	if runtime.GOOS == "linux" {
		want = append(want, "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
			"process_max_fds", "process_start_time_seconds", "process_virtual_memory_bytes")
	}
	for _, name := range want {
		if fams[name] == nil {
			t.Errorf("%s missing", name)
		}
	}
	if v, ok := value(fams, "go_goroutines", nil); !ok || v < 1 {
		t.Errorf("go_goroutines = %v", v)
	}
}
