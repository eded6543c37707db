// Package tracing exports the router's tool calls as OpenTelemetry
// traces and metrics over OTLP/HTTP, when OTEL_EXPORTER_OTLP_ENDPOINT (or
// the signal-specific _TRACES_/_METRICS_ENDPOINT) is set. Unset, New
// returns nil and nothing of the SDK is built: no provider, no exporter,
// no goroutine.
//
// Traces: one span per tool call ("tools/call <tool>", kind server), from
// dispatch to answer, with a child span ("upstream <server>/<tool>", kind
// client) around the call to the child server for proxied tools. Spans
// carry the tool, its source and server, the session id and the outcome;
// never an argument or an answer. An isError answer or a JSON-RPC error
// sets the span's status to Error.
//
// Metrics: evokore.tool.calls (counter) and evokore.tool.duration
// (histogram, milliseconds), by tool, source and outcome, exported every
// 30 s and at shutdown.
//
// The standard OTEL_* variables the SDK reads (headers, timeouts,
// compression, resource attributes) apply as usual.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

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
	// MetricInterval is how often metrics are exported; zero is 30 s.
	MetricInterval time.Duration
	Log            *slog.Logger
}

// Exporter owns the providers.
type Exporter struct {
	tracer   trace.Tracer
	tp       *sdktrace.TracerProvider
	mp       *sdkmetric.MeterProvider
	calls    metric.Int64Counter
	duration metric.Float64Histogram
}

// New builds the exporter, or returns nil when no endpoint is set.
func New(o Options) (*Exporter, error) {
	traces, metrics := signalURL(o.TracesEndpoint, o.Endpoint, "/v1/traces"), signalURL(o.MetricsEndpoint, o.Endpoint, "/v1/metrics")
	if traces == "" && metrics == "" {
		return nil, nil
	}
	if o.MetricInterval <= 0 {
		o.MetricInterval = 30 * time.Second
	}
	ctx := context.Background()
	res := resource.NewWithAttributes("", attribute.String("service.name", "evokore"), attribute.String("service.version", o.Version))
	e := &Exporter{}
	var tpOpts []sdktrace.TracerProviderOption
	if traces != "" {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(traces))
		if err != nil {
			return nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		tpOpts = append(tpOpts, sdktrace.WithBatcher(exp))
	}
	e.tp = sdktrace.NewTracerProvider(append(tpOpts, sdktrace.WithResource(res))...)
	e.tracer = e.tp.Tracer("github.com/evokore/evokore/internal/router")
	var mpOpts []sdkmetric.Option
	if metrics != "" {
		exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(metrics))
		if err != nil {
			return nil, fmt.Errorf("OTLP metric exporter: %w", err)
		}
		mpOpts = append(mpOpts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(o.MetricInterval))))
	}
	e.mp = sdkmetric.NewMeterProvider(append(mpOpts, sdkmetric.WithResource(res))...)
	meter := e.mp.Meter("github.com/evokore/evokore/internal/router")
	var err error
	if e.calls, err = meter.Int64Counter("evokore.tool.calls", metric.WithDescription("Tool calls dispatched, by tool, source and outcome.")); err != nil {
		return nil, err
	}
	if e.duration, err = meter.Float64Histogram("evokore.tool.duration", metric.WithUnit("ms"),
		metric.WithDescription("Time from dispatch to answer of a tool call.")); err != nil {
		return nil, err
	}
	return e, nil
}

// signalURL is the full URL of one signal: its own variable, else the
// base endpoint with the signal's path.
func signalURL(specific, base, path string) string {
	if specific != "" {
		return specific
	}
	if base == "" {
		return ""
	}
	return strings.TrimRight(base, "/") + path
}

// Middleware wraps dispatch in the tool-call span and records the
// metrics. It goes outermost, so the span covers the whole call.
func (e *Exporter) Middleware(next router.Dispatch) router.Dispatch {
	return func(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
		attrs := []attribute.KeyValue{
			attribute.String("mcp.tool.name", c.Entry.Name),
			attribute.String("evokore.tool.source", string(c.Entry.Source)),
		}
		if c.Entry.Server != "" {
			attrs = append(attrs, attribute.String("evokore.server", c.Entry.Server))
		}
		spanAttrs := attrs
		if c.Session != nil {
			spanAttrs = append(spanAttrs, attribute.String("mcp.session.id", c.Session.ID))
		}
		ctx, span := e.tracer.Start(ctx, "tools/call "+c.Entry.Name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(spanAttrs...))
		start := time.Now()
		res, err := next(ctx, c)
		outcome := finish(span, res, err)
		span.End()
		mattrs := metric.WithAttributes(append(attrs, attribute.String("evokore.outcome", outcome))...)
		e.calls.Add(ctx, 1, mattrs)
		e.duration.Record(ctx, float64(time.Since(start).Microseconds())/1000, mattrs)
		return res, err
	}
}

// Upstream wraps a dispatcher to child servers in the upstream span.
func (e *Exporter) Upstream(ctx context.Context, c *router.Call, call func(context.Context) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	if c.Entry.Source != catalog.SourceProxy {
		return call(ctx)
	}
	ctx, span := e.tracer.Start(ctx, "upstream "+c.Entry.Server+"/"+c.Entry.Original, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("evokore.server", c.Entry.Server), attribute.String("mcp.tool.name", c.Entry.Original)))
	res, err := call(ctx)
	finish(span, res, err)
	span.End()
	return res, err
}

// finish sets a span's outcome and returns it: ok or error.
func finish(span trace.Span, res *mcp.CallToolResult, err error) string {
	switch {
	case err != nil:
		span.SetStatus(codes.Error, "the call failed") // never the text: it may quote a secret
		return "error"
	case res != nil && res.IsError:
		span.SetStatus(codes.Error, "the tool answered isError")
		return "error"
	}
	span.SetStatus(codes.Ok, "")
	return "ok"
}

// Shutdown exports what is buffered and stops the providers.
func (e *Exporter) Shutdown(ctx context.Context) error {
	return errors.Join(e.tp.Shutdown(ctx), e.mp.Shutdown(ctx))
}
