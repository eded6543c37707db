package tracing_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/testutil/otlptest"
	"github.com/evokore/evokore/internal/tracing"
)

// logBuffer is a logger's output, safe for the exporter's goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newExporter builds an exporter to col with the OTEL_* variables env.
func newExporter(t *testing.T, col *otlptest.Collector, env map[string]string) (*tracing.Exporter, *logBuffer) {
	t.Helper()
	log := &logBuffer{}
	e, err := tracing.New(tracing.Options{Endpoint: col.URL, Version: "test", Getenv: func(k string) string { return env[k] },
		Log: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil || e == nil {
		t.Fatalf("New: %v %v", e, err)
	}
	return e, log
}

// call dispatches one call of a native tool through the middleware.
func call(e *tracing.Exporter, name string) {
	ok := func(context.Context, *router.Call) (*mcp.CallToolResult, error) { return &mcp.CallToolResult{}, nil }
	_, _ = e.Middleware(ok)(context.Background(), &router.Call{Entry: &catalog.Entry{Name: name}})
}

func shutdown(t *testing.T, e *tracing.Exporter) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return e.Shutdown(ctx)
}

// Spans that find the queue full are dropped, counted and said in the
// log; the ones queued still go out at shutdown.
func TestAFullQueueDropsAndCounts(t *testing.T) {
	col := otlptest.New(t)
	e, log := newExporter(t, col, map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "2", "OTEL_BSP_SCHEDULE_DELAY": "600000"})
	for range 5 {
		call(e, "t")
	}
	if err := shutdown(t, e); err != nil {
		t.Fatal(err)
	}
	col.Check()
	if n := len(col.Spans()); n != 2 {
		t.Errorf("%d spans exported, want the 2 the queue held", n)
	}
	if !strings.Contains(log.String(), "3 spans dropped") {
		t.Errorf("log: %s", log)
	}
	// Metrics count every call, exported or not.
	if p := col.LastMetrics()["evokore.tool.calls"].Sum; p == nil || p.DataPoints[0].AsInt != "5" {
		t.Errorf("calls: %+v", p)
	}
}

// Batches go on the schedule delay, and metrics on their interval,
// without waiting for shutdown; a full batch goes at once.
func TestExportsOnTheTimers(t *testing.T) {
	col := otlptest.New(t)
	e, _ := newExporter(t, col, map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_METRIC_EXPORT_INTERVAL": "50"})
	defer shutdown(t, e)
	call(e, "t")
	waitFor(t, func() bool {
		return len(col.Spans()) == 1 && col.LastMetrics()["evokore.tool.duration"].Histogram != nil
	})

	col2 := otlptest.New(t)
	e2, _ := newExporter(t, col2, map[string]string{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "3", "OTEL_BSP_SCHEDULE_DELAY": "600000"})
	defer shutdown(t, e2)
	for range 3 {
		call(e2, "t")
	}
	waitFor(t, func() bool { return len(col2.Spans()) == 3 })
	col.Check()
	col2.Check()
}

// A batch a collector answers 503 is sent again; one it answers 400 is
// not, and the failure is logged.
func TestRetriesWhatTheCollectorSaysToRetry(t *testing.T) {
	col := otlptest.New(t)
	col.Answer = func(n int, r *http.Request) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}
	e, _ := newExporter(t, col, map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:1/unused"})
	call(e, "t")
	if err := shutdown(t, e); err != nil || len(col.Spans()) != 1 {
		t.Errorf("after a 503: %v, %d spans", err, len(col.Spans()))
	}

	bad := otlptest.New(t)
	bad.Answer = func(int, *http.Request) int { return http.StatusBadRequest }
	e, log := newExporter(t, bad, nil)
	call(e, "t")
	if err := shutdown(t, e); err == nil || len(bad.Requests()) != 2 { // one for traces, one for metrics
		t.Errorf("after a 400: %v, %d requests", err, len(bad.Requests()))
	}
	if !strings.Contains(log.String(), "400 Bad Request") {
		t.Errorf("log: %s", log)
	}
}

// Headers that do not parse turn export off rather than send requests
// without the credentials, and the error does not quote them; no
// endpoint, or OTEL_SDK_DISABLED, builds nothing.
func TestOffWhenUnsetDisabledOrMalformed(t *testing.T) {
	_, err := tracing.New(tracing.Options{Endpoint: "http://127.0.0.1:1", Getenv: func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer %zzsecret"}[k]
	}})
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_HEADERS") {
		t.Errorf("malformed headers: %v", err)
	}
	if e, err := tracing.New(tracing.Options{}); e != nil || err != nil {
		t.Errorf("no endpoint: %v %v", e, err)
	}
	off := func(k string) string { return map[string]string{"OTEL_SDK_DISABLED": "true"}[k] }
	if e, err := tracing.New(tracing.Options{Endpoint: "http://127.0.0.1:1", Getenv: off}); e != nil || err != nil {
		t.Errorf("disabled: %v %v", e, err)
	}
	if _, err := tracing.New(tracing.Options{Endpoint: "localhost:4318"}); err == nil {
		t.Error("an endpoint without a scheme was taken")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("timed out")
}
