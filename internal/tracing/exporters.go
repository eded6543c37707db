package tracing

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Variables are the OTEL_* variables that apply to evokore's export: the
// ones New reads to decide whether export is on and which exporter to
// build, and the ones the SDK and the OTLP exporters read themselves
// (each OTEL_EXPORTER_OTLP_* also per signal, _TRACES_ or _METRICS_,
// which wins for its signal). config lists them as known variables.
var Variables = []string{
	"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER",
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
	"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
	"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION",
	"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_KEY", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY",
	"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TRACES_INSECURE", "OTEL_EXPORTER_OTLP_METRICS_INSECURE",
	"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
	"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG",
	"OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT", "OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
	"OTEL_METRIC_EXPORT_INTERVAL", "OTEL_METRIC_EXPORT_TIMEOUT",
	"OTEL_RESOURCE_ATTRIBUTES", "OTEL_SERVICE_NAME",
}

// signals is what the variables say about each signal.
type signals struct {
	traces, metrics                 bool
	tracesProtocol, metricsProtocol string
	// intervalSet: OTEL_METRIC_EXPORT_INTERVAL is the SDK's to apply.
	intervalSet bool
}

// readSignals decides which signals are exported and how. A signal is on
// when an endpoint is set for it (the SDK's default endpoints do not turn
// export on) and its OTEL_*_EXPORTER is not none.
func readSignals() (signals, error) {
	get := func(name string) string { return strings.TrimSpace(os.Getenv(name)) }
	if off, err := strconv.ParseBool(get("OTEL_SDK_DISABLED")); err == nil && off {
		return signals{}, nil
	}
	base := get("OTEL_EXPORTER_OTLP_ENDPOINT")
	on := func(endpoint, exporter string) (bool, error) {
		switch e := get(exporter); e {
		case "", "otlp":
			return base != "" || get(endpoint) != "", nil
		case "none":
			return false, nil
		default:
			return false, fmt.Errorf("%s=%q: evokore exports over otlp only (or none)", exporter, e)
		}
	}
	protocol := func(specific string) (string, error) {
		name := specific
		p := get(specific)
		if p == "" {
			name, p = "OTEL_EXPORTER_OTLP_PROTOCOL", get("OTEL_EXPORTER_OTLP_PROTOCOL")
		}
		switch p {
		case "":
			return "http/protobuf", nil
		case "http/protobuf", "grpc", "http/json":
			return p, nil
		}
		return "", fmt.Errorf("%s=%q: the protocol is http/protobuf, grpc or (traces only) http/json", name, p)
	}
	var s signals
	var err error
	if s.traces, err = on("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER"); err != nil {
		return signals{}, err
	}
	if s.metrics, err = on("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_METRICS_EXPORTER"); err != nil {
		return signals{}, err
	}
	if s.traces {
		if s.tracesProtocol, err = protocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"); err != nil {
			return signals{}, err
		}
	}
	if s.metrics {
		if s.metricsProtocol, err = protocol("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"); err != nil {
			return signals{}, err
		}
		if s.metricsProtocol == "http/json" {
			return signals{}, fmt.Errorf("the OTLP metric exporter has no http/json encoding: set OTEL_EXPORTER_OTLP_METRICS_PROTOCOL to http/protobuf or grpc")
		}
	}
	s.intervalSet = get("OTEL_METRIC_EXPORT_INTERVAL") != ""
	return s, nil
}

// newSpanExporter is the OTLP span exporter for protocol; it reads its
// endpoint, headers, timeout, compression and certificates itself (the
// HTTP one its encoding too).
func newSpanExporter(ctx context.Context, protocol string) (sdktrace.SpanExporter, error) {
	if protocol == "grpc" {
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}

// newMetricExporter is the OTLP metric exporter for protocol.
func newMetricExporter(ctx context.Context, protocol string) (sdkmetric.Exporter, error) {
	if protocol == "grpc" {
		return otlpmetricgrpc.New(ctx)
	}
	return otlpmetrichttp.New(ctx)
}
