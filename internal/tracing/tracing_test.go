package tracing_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/testutil/otlptest"
	"github.com/evokore/evokore/internal/tracing"
)

// logBuffer is a logger's output, safe for the SDK's goroutines.
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

// newExporter builds an exporter with the OTEL_* variables env set in
// the process environment, where the SDK reads them.
func newExporter(t *testing.T, env map[string]string) (*tracing.Exporter, *logBuffer) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	log := &logBuffer{}
	e, err := tracing.New(tracing.Options{Version: "test", Log: slog.New(slog.NewTextHandler(log, nil))})
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

// While the collector holds an export, spans beyond the queue are
// dropped and the calls do not wait for it; the queued ones still go out
// at shutdown, and the metrics count every call.
func TestAFullQueueDropsWithoutBlockingCalls(t *testing.T) {
	col := otlptest.New(t)
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/traces" {
			once.Do(func() { close(held); <-release })
		}
		col.ServeHTTP(w, r)
	}))
	defer gate.Close()
	e, _ := newExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": gate.URL,
		"OTEL_BSP_MAX_QUEUE_SIZE": "2", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "1", "OTEL_BSP_SCHEDULE_DELAY": "600000"})
	call(e, "t") // a full batch: its export is held by the collector
	<-held
	for range 5 {
		call(e, "t") // two wait in the queue, three find it full
	}
	close(release)
	if err := shutdown(t, e); err != nil {
		t.Fatal(err)
	}
	col.Check()
	if n := len(col.Spans()); n != 3 {
		t.Errorf("%d spans exported, want the one held and the 2 the queue held", n)
	}
	m := col.LastMetrics()["evokore.tool.calls"]
	if m == nil || len(m.GetSum().GetDataPoints()) != 1 || m.GetSum().GetDataPoints()[0].GetAsInt() != 6 {
		t.Errorf("evokore.tool.calls: %v", m)
	}
}

// OTEL_TRACES_SAMPLER is the SDK's: always_off exports no span, and the
// metrics still count the calls.
func TestTheSamplerVariableApplies(t *testing.T) {
	col := otlptest.New(t)
	e, _ := newExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL, "OTEL_TRACES_SAMPLER": "always_off"})
	call(e, "t")
	if err := shutdown(t, e); err != nil {
		t.Fatal(err)
	}
	col.Check()
	if n := len(col.Spans()); n != 0 {
		t.Errorf("%d spans exported with always_off", n)
	}
	if col.LastMetrics()["evokore.tool.calls"] == nil {
		t.Error("no call metrics")
	}
}

// traceCollector is an OTLP/gRPC trace collector that counts spans.
type traceCollector struct {
	coltrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (c *traceCollector) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.names = append(c.names, s.GetName())
			}
		}
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// OTEL_EXPORTER_OTLP_PROTOCOL=grpc sends the spans over OTLP/gRPC.
func TestGRPCProtocol(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	col := &traceCollector{}
	coltrace.RegisterTraceServiceServer(srv, col)
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()
	e, _ := newExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://" + l.Addr().String(),
		"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
	call(e, "over_grpc")
	if err := shutdown(t, e); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.names) != 1 || col.names[0] != "tools/call over_grpc" {
		t.Errorf("spans over gRPC: %v", col.names)
	}
}

// No endpoint, OTEL_SDK_DISABLED, or both exporters none build nothing;
// a protocol evokore cannot speak is an error naming the variable.
func TestOffUnlessAnEndpointIsSet(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"},
	} {
		t.Run("", func(t *testing.T) {
			for k, v := range env {
				t.Setenv(k, v)
			}
			if e, err := tracing.New(tracing.Options{}); e != nil || err != nil {
				t.Errorf("%v: %v %v", env, e, err)
			}
		})
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "carrier-pigeon")
	if e, err := tracing.New(tracing.Options{}); e != nil || err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL") {
		t.Errorf("unknown protocol: %v %v", e, err)
	}
}

// A header the SDK cannot parse is left out of the requests, and its
// value (a credential, perhaps) never reaches the log.
func TestAMalformedHeaderIsNotLogged(t *testing.T) {
	col := otlptest.New(t)
	e, log := newExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL,
		"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer %zzsecret,x-tenant=acme,broken-secret"})
	call(e, "t")
	if err := shutdown(t, e); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "secret") || !strings.Contains(log.String(), "OpenTelemetry") {
		t.Errorf("log: %s", log)
	}
	for _, r := range col.Requests() {
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Tenant") != "acme" {
			t.Errorf("headers: %v", r.Header)
		}
	}
}
