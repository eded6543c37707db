// Package tracing exports the router's tool calls as OpenTelemetry
// traces and metrics over OTLP, with the OpenTelemetry SDK and its OTLP
// exporters, when OTEL_EXPORTER_OTLP_ENDPOINT (or the signal-specific
// _TRACES_/_METRICS_ENDPOINT) is set. Unset, New returns nil and nothing
// of the SDK is built: no provider, no exporter, no goroutine.
//
// Traces: one span per tool call ("tools/call <tool>", kind server), from
// dispatch to answer, with a child span ("upstream <server>/<tool>", kind
// client) around the call to the child server for proxied tools. Spans
// carry the tool, its source and server and the session id; never an
// argument or an answer. An isError answer or a JSON-RPC error sets the
// span's status to Error.
//
// Trace context (W3C): a call's span continues the client's trace, taken
// from the request's _meta.traceparent and _meta.tracestate (MCP
// 2026-07-28) or else from the HTTP request's traceparent and tracestate
// headers; the request to the child server carries the call's context in
// its _meta (see Inject). With export off the client's context is passed
// on to the child unchanged.
//
// Metrics: evokore.tool.calls (counter) and evokore.tool.duration
// (histogram, milliseconds), by tool, source and outcome, cumulative,
// exported every 30 s (OTEL_METRIC_EXPORT_INTERVAL) and at shutdown.
//
// The SDK and the exporters read the standard OTEL_* variables from the
// process environment themselves (Variables lists the ones that apply):
// the protocol (http/protobuf, the default, or grpc), headers, timeouts,
// compression, certificates, the sampler, the batch processor and the
// resource. evokore only decides whether export is on, picks the exporter
// for the protocol and sets the resource's defaults (service.name
// evokore, service.version).
package tracing

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/router"
)

// The attribute keys spans and metrics carry.
const (
	attrTool    = "mcp.tool.name"
	attrSource  = "evokore.tool.source"
	attrServer  = "evokore.server"
	attrSession = "mcp.session.id"
	attrOutcome = "evokore.outcome"
)

// scopeName is the instrumentation scope of every span and metric.
const scopeName = "github.com/evokore/evokore/internal/router"

// metricInterval is evokore's metric export interval when
// OTEL_METRIC_EXPORT_INTERVAL is unset (the SDK's own is a minute).
const metricInterval = 30 * time.Second

// Options say how to export; where to is the OTEL_* variables'.
type Options struct {
	// Version is the router's version, the service.version attribute.
	Version string
	// Log receives the SDK's errors (failed exports, unusable variables),
	// at most one a minute per message.
	Log *slog.Logger
}

// Exporter owns the SDK's providers.
type Exporter struct {
	tracer   trace.Tracer // nil: traces are off
	tp       *sdktrace.TracerProvider
	mp       *sdkmetric.MeterProvider // nil: metrics are off
	calls    metric.Int64Counter
	duration metric.Float64Histogram
}

// New builds the exporter, or returns nil when no endpoint is set (or
// OTEL_SDK_DISABLED is true). An error (an unknown protocol, a
// certificate that does not load) leaves export off.
func New(o Options) (*Exporter, error) {
	sig, err := readSignals()
	if err != nil || !sig.traces && !sig.metrics {
		return nil, err
	}
	if o.Log != nil {
		routeErrors(o.Log)
	}
	ctx := context.Background()
	// The defaults first: OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME
	// win over them. A malformed list keeps what parsed (the SDK's
	// partial resource) and is logged.
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "evokore"),
		attribute.String("service.version", o.Version)), resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		if res == nil {
			return nil, err
		}
		otel.Handle(err)
	}
	e := &Exporter{}
	if sig.traces {
		exp, err := newSpanExporter(ctx, sig.tracesProtocol)
		if err != nil {
			return nil, err
		}
		e.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		e.tracer = e.tp.Tracer(scopeName)
	}
	if sig.metrics {
		exp, err := newMetricExporter(ctx, sig.metricsProtocol)
		if err != nil {
			return nil, errors.Join(err, e.shutdownTraces(ctx))
		}
		var opts []sdkmetric.PeriodicReaderOption
		if !sig.intervalSet {
			opts = append(opts, sdkmetric.WithInterval(metricInterval))
		}
		e.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, opts...)), sdkmetric.WithResource(res))
		meter := e.mp.Meter(scopeName)
		e.calls, _ = meter.Int64Counter("evokore.tool.calls", metric.WithDescription("Tool calls dispatched, by tool, source and outcome."))
		e.duration, _ = meter.Float64Histogram("evokore.tool.duration", metric.WithUnit("ms"),
			metric.WithDescription("Time from dispatch to answer of a tool call."))
	}
	return e, nil
}

// Middleware wraps dispatch in the tool-call span (and a proxied call in
// the upstream span inside it) and records the metrics. It goes
// outermost, so the span covers the whole call.
func (e *Exporter) Middleware(next router.Dispatch) router.Dispatch {
	return func(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
		attrs := make([]attribute.KeyValue, 0, 5)
		attrs = append(attrs, attribute.String(attrTool, c.Entry.Name), attribute.String(attrSource, c.Entry.Source.String()))
		if c.Entry.Server != "" {
			attrs = append(attrs, attribute.String(attrServer, c.Entry.Server))
		}
		var span trace.Span
		if e.tracer != nil {
			spanAttrs := attrs
			if c.Session != nil {
				spanAttrs = append(spanAttrs[:len(spanAttrs):len(spanAttrs)], attribute.String(attrSession, c.Session.ID))
			}
			ctx, span = e.tracer.Start(withClient(ctx, c.Meta), "tools/call "+c.Entry.Name,
				trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(spanAttrs...))
		}
		start := time.Now()
		res, err := e.Upstream(ctx, c, func(ctx context.Context) (*mcp.CallToolResult, error) { return next(ctx, c) })
		elapsed := time.Since(start)
		outcome := finish(span, res, err)
		if e.mp != nil {
			set := metric.WithAttributes(append(attrs, attribute.String(attrOutcome, outcome))...)
			// A context without the span: the metrics need no exemplar.
			e.calls.Add(context.Background(), 1, set)
			e.duration.Record(context.Background(), float64(elapsed.Microseconds())/1000, set)
		}
		return res, err
	}
}

// Upstream runs call, a proxied call's dispatch to its child, in the
// upstream span.
func (e *Exporter) Upstream(ctx context.Context, c *router.Call, call func(context.Context) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	if c.Entry.Source != catalog.SourceProxy || e.tracer == nil {
		return call(ctx)
	}
	ctx, span := e.tracer.Start(ctx, "upstream "+c.Entry.Server+"/"+c.Entry.Original, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String(attrServer, c.Entry.Server), attribute.String(attrTool, c.Entry.Original)))
	res, err := call(ctx)
	finish(span, res, err)
	return res, err
}

// finish ends span (when there is one) with the call's status and
// returns the outcome: ok or error (an isError answer and a JSON-RPC
// error alike). The status never quotes the error: it may carry a
// secret.
func finish(span trace.Span, res *mcp.CallToolResult, err error) string {
	outcome, code, msg := "ok", codes.Ok, ""
	switch {
	case err != nil:
		outcome, code, msg = "error", codes.Error, "the call failed"
	case res != nil && res.IsError:
		outcome, code, msg = "error", codes.Error, "the tool answered isError"
	}
	if span != nil {
		span.SetStatus(code, msg)
		span.End()
	}
	return outcome
}

// Shutdown exports what is buffered (the spans queued, the metrics one
// last time) and stops the providers, within ctx.
func (e *Exporter) Shutdown(ctx context.Context) error {
	var errs []error
	errs = append(errs, e.shutdownTraces(ctx))
	if e.mp != nil {
		errs = append(errs, e.mp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

func (e *Exporter) shutdownTraces(ctx context.Context) error {
	if e.tp == nil {
		return nil
	}
	return e.tp.Shutdown(ctx)
}
