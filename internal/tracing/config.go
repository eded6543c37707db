package tracing

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/safefile"
)

// config is what the options and the OTEL_* variables decide.
type config struct {
	disabled        bool
	traces, metrics signalConfig
	resource        []keyValue
	scheduleDelay   time.Duration
	maxQueue        int
	batchSize       int
	metricInterval  time.Duration
}

// signalConfig is one signal's endpoint and how to reach it.
type signalConfig struct {
	url      string
	headers  [][2]string
	timeout  time.Duration
	gzip     bool
	caFile   string
	certFile string
	keyFile  string
}

// signalVars are the variable names of one signal, the signal-specific
// one first: spelt out so a reader (and config's list of variables)
// finds every name the router reads.
type signalVars struct {
	headers, timeout, compression, certificate, clientCertificate, clientKey [2]string
}

var (
	tracesVars = signalVars{
		headers:           [2]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"},
		timeout:           [2]string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"},
		compression:       [2]string{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"},
		certificate:       [2]string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		clientCertificate: [2]string{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"},
		clientKey:         [2]string{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", "OTEL_EXPORTER_OTLP_CLIENT_KEY"},
	}
	metricsVars = signalVars{
		headers:           [2]string{"OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"},
		timeout:           [2]string{"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"},
		compression:       [2]string{"OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"},
		certificate:       [2]string{"OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		clientCertificate: [2]string{"OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"},
		clientKey:         [2]string{"OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY", "OTEL_EXPORTER_OTLP_CLIENT_KEY"},
	}
)

// readConfig applies the OTEL_* variables to the options. Only a value
// that cannot be honoured safely is an error (headers that do not parse
// may be the credentials, and a certificate that does not load would
// send spans to a collector the operator did not mean to trust); a
// malformed number takes its default, as the specification asks.
func readConfig(o Options, getenv func(string) string) (config, error) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	if b, err := strconv.ParseBool(get("OTEL_SDK_DISABLED")); err == nil && b {
		return config{disabled: true}, nil
	}
	c := config{
		traces:         signalConfig{url: signalURL(o.TracesEndpoint, o.Endpoint, "/v1/traces")},
		metrics:        signalConfig{url: signalURL(o.MetricsEndpoint, o.Endpoint, "/v1/metrics")},
		scheduleDelay:  millis(get("OTEL_BSP_SCHEDULE_DELAY"), 5*time.Second),
		maxQueue:       positive(get("OTEL_BSP_MAX_QUEUE_SIZE"), 2048),
		batchSize:      positive(get("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"), 512),
		metricInterval: o.MetricInterval,
	}
	if c.traces.url == "" && c.metrics.url == "" {
		return config{disabled: true}, nil
	}
	if c.metricInterval <= 0 {
		c.metricInterval = millis(get("OTEL_METRIC_EXPORT_INTERVAL"), 30*time.Second)
	}
	c.batchSize = min(c.batchSize, c.maxQueue)
	for _, s := range []struct {
		c    *signalConfig
		vars signalVars
	}{{&c.traces, tracesVars}, {&c.metrics, metricsVars}} {
		first := func(names [2]string) (string, string) {
			if v := get(names[0]); v != "" {
				return v, names[0]
			}
			return get(names[1]), names[1]
		}
		h, hvar := first(s.vars.headers)
		headers, err := parsePairs(h)
		if err != nil {
			return config{}, fmt.Errorf("%s: %w", hvar, err)
		}
		t, _ := first(s.vars.timeout)
		comp, _ := first(s.vars.compression)
		s.c.headers = headers
		s.c.timeout = millis(t, 10*time.Second)
		s.c.gzip = strings.EqualFold(comp, "gzip")
		s.c.caFile, _ = first(s.vars.certificate)
		s.c.certFile, _ = first(s.vars.clientCertificate)
		s.c.keyFile, _ = first(s.vars.clientKey)
	}
	res := map[string]string{"service.name": "evokore", "service.version": o.Version}
	order := []string{"service.name", "service.version"}
	attrs, err := parsePairs(get("OTEL_RESOURCE_ATTRIBUTES"))
	if err != nil {
		return config{}, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	if name := get("OTEL_SERVICE_NAME"); name != "" {
		attrs = append(attrs, [2]string{"service.name", name})
	}
	for _, kv := range attrs {
		if _, ok := res[kv[0]]; !ok {
			order = append(order, kv[0])
		}
		res[kv[0]] = kv[1]
	}
	for _, k := range order {
		c.resource = append(c.resource, attr(k, res[k]))
	}
	return c, nil
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

// parsePairs reads the specification's key1=value1,key2=value2 lists
// (headers, resource attributes), percent-decoded.
func parsePairs(s string) ([][2]string, error) {
	var out [][2]string
	for item := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		key, kerr := url.PathUnescape(strings.TrimSpace(k))
		val, verr := url.PathUnescape(strings.TrimSpace(v))
		if !ok || key == "" || kerr != nil || verr != nil {
			// Never quote the item: it may be a credential.
			return nil, fmt.Errorf("an entry is not key=value (percent-encoded)")
		}
		out = append(out, [2]string{key, val})
	}
	return out, nil
}

// millis is a duration in milliseconds, or def when unset or malformed.
func millis(s string, def time.Duration) time.Duration {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return time.Duration(n) * time.Millisecond
	}
	return def
}

// positive is a positive integer, or def when unset or malformed.
func positive(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return n
	}
	return def
}

// transport is the HTTP transport of one signal: the default one, with
// the certificate authority and client certificate the variables name.
func (c signalConfig) transport() (http.RoundTripper, error) {
	if c.caFile == "" && c.certFile == "" && c.keyFile == "" {
		return http.DefaultTransport, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.caFile != "" {
		pem, err := safefile.Load(c.caFile, safefile.MaxConfigBytes)
		if err != nil {
			return nil, fmt.Errorf("the OTLP certificate: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the OTLP certificate %s holds no PEM certificate", c.caFile)
		}
	}
	if c.certFile != "" || c.keyFile != "" {
		cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
		if err != nil {
			return nil, fmt.Errorf("the OTLP client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tc
	return t, nil
}
