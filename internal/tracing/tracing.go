// Package tracing exports the router's tool calls as OpenTelemetry
// traces and metrics over OTLP/HTTP, when OTEL_EXPORTER_OTLP_ENDPOINT (or
// the signal-specific _TRACES_/_METRICS_ENDPOINT) is set. Unset, New
// returns nil and nothing is built: no queue, no client, no goroutine.
//
// Traces: one span per tool call ("tools/call <tool>", kind server), from
// dispatch to answer, with a child span ("upstream <server>/<tool>", kind
// client) around the call to the child server for proxied tools. Spans
// carry the tool, its source and server, the session id and the outcome;
// never an argument or an answer. An isError answer or a JSON-RPC error
// sets the span's status to Error. Every call span starts a new trace.
//
// Metrics: evokore.tool.calls (counter) and evokore.tool.duration
// (histogram, milliseconds), by tool, source and outcome, cumulative,
// exported every 30 s and at shutdown.
//
// The exporter is evokore's own, not the OpenTelemetry SDK's: the SDK's
// exporters link protobuf and grpc, whose package initialisation every
// evokore process paid for at start whether or not export was on (see
// docs/decisions.md). It speaks the OTLP/HTTP JSON encoding, which
// collectors accept on the same /v1/traces and /v1/metrics paths.
// Spans wait in a bounded queue (full: the span is dropped and counted
// in the log) and go in batches on a timer and at Shutdown.
//
// Besides the endpoints, these standard variables apply, with the
// meaning the OpenTelemetry specification gives them:
//   - OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT (ms, default
//     10000), OTEL_EXPORTER_OTLP_COMPRESSION (gzip or none),
//     OTEL_EXPORTER_OTLP_CERTIFICATE, OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE
//     and OTEL_EXPORTER_OTLP_CLIENT_KEY, each also as a signal-specific
//     OTEL_EXPORTER_OTLP_TRACES_* or OTEL_EXPORTER_OTLP_METRICS_* that wins
//     for its signal;
//   - OTEL_BSP_SCHEDULE_DELAY (ms, default 5000), OTEL_BSP_MAX_QUEUE_SIZE
//     (2048) and OTEL_BSP_MAX_EXPORT_BATCH_SIZE (512);
//   - OTEL_METRIC_EXPORT_INTERVAL (ms; evokore's default is 30000);
//   - OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, over the defaults
//     service.name=evokore and service.version=<version>;
//   - OTEL_SDK_DISABLED=true turns export off.
//
// Others do not: OTEL_EXPORTER_OTLP_PROTOCOL (the encoding is always
// http/json), the samplers (every call is traced) and propagators (no
// trace context is read from or sent to clients and child servers).
// Failed exports are retried on network errors, 429, 502, 503 and 504 for
// up to a minute, honouring Retry-After.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/router"
)

// Options say where to export.
type Options struct {
	// Endpoint is OTEL_EXPORTER_OTLP_ENDPOINT, a base URL: traces go to
	// <Endpoint>/v1/traces and metrics to <Endpoint>/v1/metrics unless
	// TracesEndpoint or MetricsEndpoint (full URLs) say otherwise.
	Endpoint        string
	TracesEndpoint  string
	MetricsEndpoint string
	// Version is the router's version, the service.version attribute.
	Version string
	// MetricInterval is how often metrics are exported; zero is
	// OTEL_METRIC_EXPORT_INTERVAL, else 30 s.
	MetricInterval time.Duration
	// Getenv reads the other OTEL_* variables (see the package doc); nil
	// reads none, so every one takes its default.
	Getenv func(string) string
	Log    *slog.Logger
}

// Exporter records spans and metrics and sends them to the collector.
type Exporter struct {
	cfg     config
	traces  *endpoint // nil: spans are not recorded
	metrics *endpoint // nil: metrics are not recorded
	log     *slog.Logger
	start   time.Time

	mu      sync.Mutex
	queue   []*span
	dropped uint64 // spans dropped on a full queue, not yet logged
	closed  bool

	metricsMu sync.Mutex
	series    map[string]*series // by attribute values

	kick     chan struct{} // a full batch is waiting
	stop     chan struct{}
	loops    sync.WaitGroup
	cancel   context.CancelFunc // aborts the loops' exports
	loopCtx  context.Context
	shutdown sync.Once
	err      error

	warnMu   sync.Mutex
	lastWarn map[string]time.Time
}

// New builds the exporter, or returns nil when no endpoint is set (or
// OTEL_SDK_DISABLED is true).
func New(o Options) (*Exporter, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	cfg, err := readConfig(o, getenv)
	if err != nil || cfg.disabled {
		return nil, err
	}
	e := &Exporter{cfg: cfg, log: o.Log, start: time.Now(), kick: make(chan struct{}, 1), stop: make(chan struct{}),
		series: map[string]*series{}, lastWarn: map[string]time.Time{}}
	if cfg.traces.url != "" {
		if e.traces, err = newEndpoint("traces", cfg.traces, o.Version); err != nil {
			return nil, err
		}
	}
	if cfg.metrics.url != "" {
		if e.metrics, err = newEndpoint("metrics", cfg.metrics, o.Version); err != nil {
			return nil, err
		}
	}
	e.loopCtx, e.cancel = context.WithCancel(context.Background())
	if e.traces != nil {
		e.loops.Go(e.spanLoop)
	}
	if e.metrics != nil {
		e.loops.Go(e.metricLoop)
	}
	return e, nil
}

// spanKey carries the current span's ids in a context, so the upstream
// span finds its parent.
type spanKey struct{}

// Middleware wraps dispatch in the tool-call span and records the
// metrics. It goes outermost, so the span covers the whole call.
func (e *Exporter) Middleware(next router.Dispatch) router.Dispatch {
	return func(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
		var sp *span
		if e.traces != nil {
			attrs := make([]keyValue, 0, 4)
			attrs = append(attrs, attr(attrTool, c.Entry.Name), attr(attrSource, c.Entry.Source.String()))
			if c.Entry.Server != "" {
				attrs = append(attrs, attr(attrServer, c.Entry.Server))
			}
			if c.Session != nil {
				attrs = append(attrs, attr(attrSession, c.Session.ID))
			}
			sp = newSpan(nil, "tools/call "+c.Entry.Name, kindServer, attrs)
			ctx = context.WithValue(ctx, spanKey{}, sp)
		}
		start := time.Now()
		res, err := next(ctx, c)
		elapsed := time.Since(start)
		outcome := outcomeOf(res, err)
		if sp != nil {
			sp.finish(res, err)
			e.enqueue(sp)
		}
		if e.metrics != nil {
			e.record(c.Entry, outcome, float64(elapsed.Microseconds())/1000)
		}
		return res, err
	}
}

// Upstream wraps a dispatcher to child servers in the upstream span.
func (e *Exporter) Upstream(ctx context.Context, c *router.Call, call func(context.Context) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	if c.Entry.Source != catalog.SourceProxy || e.traces == nil {
		return call(ctx)
	}
	parent, _ := ctx.Value(spanKey{}).(*span)
	sp := newSpan(parent, "upstream "+c.Entry.Server+"/"+c.Entry.Original, kindClient,
		[]keyValue{attr(attrServer, c.Entry.Server), attr(attrTool, c.Entry.Original)})
	res, err := call(context.WithValue(ctx, spanKey{}, sp))
	sp.finish(res, err)
	e.enqueue(sp)
	return res, err
}

// outcomeOf is a call's outcome as the spans and metrics say it: ok or
// error (an isError answer and a JSON-RPC error alike).
func outcomeOf(res *mcp.CallToolResult, err error) string {
	if err != nil || res != nil && res.IsError {
		return "error"
	}
	return "ok"
}

// enqueue puts a finished span in the queue, or drops and counts it when
// the queue is full or the exporter shut down.
func (e *Exporter) enqueue(sp *span) {
	e.mu.Lock()
	if e.closed || len(e.queue) >= e.cfg.maxQueue {
		e.dropped++
		e.mu.Unlock()
		return
	}
	e.queue = append(e.queue, sp)
	full := len(e.queue) >= e.cfg.batchSize
	e.mu.Unlock()
	if full {
		select {
		case e.kick <- struct{}{}:
		default:
		}
	}
}

// spanLoop exports the queue every schedule delay, or sooner when a full
// batch waits.
func (e *Exporter) spanLoop() {
	t := time.NewTimer(e.cfg.scheduleDelay)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		case <-e.kick:
		}
		_ = e.flushSpans(e.loopCtx)
		t.Reset(e.cfg.scheduleDelay)
	}
}

// flushSpans exports the queue in batches until it is empty. A batch that
// fails after its retries is dropped: holding it would only delay the
// next ones behind a collector that is down.
func (e *Exporter) flushSpans(ctx context.Context) error {
	for {
		e.mu.Lock()
		n := min(len(e.queue), e.cfg.batchSize)
		batch := e.queue[:n:n]
		e.queue = e.queue[n:]
		if len(e.queue) == 0 {
			e.queue = nil
		}
		dropped := e.dropped
		e.dropped = 0
		e.mu.Unlock()
		if dropped > 0 {
			e.warn("dropped", fmt.Sprintf("[EVOKORE] OpenTelemetry: %d spans dropped, the export queue (%d) was full", dropped, e.cfg.maxQueue))
		}
		if n == 0 {
			return nil
		}
		if err := e.traces.post(ctx, encodeSpans(e.cfg.resource, batch)); err != nil {
			e.warn("traces", fmt.Sprintf("[EVOKORE] OpenTelemetry export of %d spans failed: %v", n, err))
			return err
		}
	}
}

// metricLoop exports the metrics every interval.
func (e *Exporter) metricLoop() {
	t := time.NewTicker(e.cfg.metricInterval)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			_ = e.exportMetrics(e.loopCtx)
		}
	}
}

// exportMetrics sends every series' cumulative values; nothing when no
// call was recorded yet.
func (e *Exporter) exportMetrics(ctx context.Context) error {
	body := e.encodeMetrics(time.Now())
	if body == nil {
		return nil
	}
	if err := e.metrics.post(ctx, body); err != nil {
		e.warn("metrics", fmt.Sprintf("[EVOKORE] OpenTelemetry export of metrics failed: %v", err))
		return err
	}
	return nil
}

// warn logs at most once a minute per kind of trouble: a collector that
// is down must not fill the log.
func (e *Exporter) warn(kind, msg string) {
	if e.log == nil {
		return
	}
	e.warnMu.Lock()
	last, now := e.lastWarn[kind], time.Now()
	quiet := !last.IsZero() && now.Sub(last) < time.Minute
	if !quiet {
		e.lastWarn[kind] = now
	}
	e.warnMu.Unlock()
	if !quiet {
		e.log.Info(msg)
	}
}

// Shutdown stops the timers, then exports the spans still queued and the
// metrics one last time, within ctx.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.shutdown.Do(func() {
		close(e.stop)
		waited := make(chan struct{})
		go func() { e.loops.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-ctx.Done():
			e.cancel() // an export stuck in its retries gives up
			<-waited
		}
		e.cancel()
		e.mu.Lock()
		e.closed = true // a call still running now is not exported
		e.mu.Unlock()
		var errs []error
		if e.traces != nil {
			errs = append(errs, e.flushSpans(ctx))
		}
		if e.metrics != nil {
			errs = append(errs, e.exportMetrics(ctx))
		}
		e.err = errors.Join(errs...)
	})
	return e.err
}
