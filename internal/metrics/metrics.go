// Package metrics exposes the router's counters on the HTTP front's
// /metrics through the Prometheus client library: calls by tool, server
// and outcome, call latency, sessions, children up, pending approvals,
// and the calls the rate limit and the cooldown turned away; with them,
// the client's Go runtime and process collectors (go_*, process_*).
//
// It sees calls through the router's seams only: it is a router.Observer
// for dispatched calls and wraps the policy stages whose refusals it
// counts, so the call path itself knows nothing about it. Each Metrics
// has its own registry, never the library's global one.
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/evokore/evokore/internal/router"
)

// Outcomes of a dispatched call.
const (
	OutcomeOK    = "ok"    // a result
	OutcomeError = "error" // an isError result
	OutcomeFail  = "fail"  // a JSON-RPC error
)

// Gauges are read at each scrape; nil ones report nothing.
type Gauges struct {
	Sessions         func() int
	ChildrenUp       func() int
	PendingApprovals func() int
}

// latencyBuckets are the call-duration histogram's upper bounds, seconds.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Metrics is one router's registry.
type Metrics struct {
	reg        *prometheus.Registry
	calls      *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	rejections *prometheus.CounterVec
}

// New builds the registry, with the Go runtime and process collectors;
// g's functions are read at scrape time.
func New(g Gauges) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evokore_tool_calls_total",
		Help: "Tool calls dispatched, by tool, child server (\"\" for evokore's own tools) and outcome (ok, error, fail).",
	}, []string{"tool", "server", "outcome"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "evokore_tool_call_duration_seconds",
		Help:    "Time from dispatch to answer of tool calls, by child server.",
		Buckets: latencyBuckets,
	}, []string{"server"})
	m.rejections = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evokore_call_rejections_total",
		Help: "Calls refused before dispatch, by reason (rate_limit, cooldown).",
	}, []string{"reason"})
	m.reg.MustRegister(m.calls, m.latency, m.rejections,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	gauge := func(name, help string, f func() int) {
		if f != nil {
			m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(f()) }))
		}
	}
	gauge("evokore_sessions", "MCP sessions this process serves.", g.Sessions)
	gauge("evokore_children_up", "Child servers connected.", g.ChildrenUp)
	gauge("evokore_pending_approvals", "Approvals waiting for a decision.", g.PendingApprovals)
	return m
}

// Observe implements router.Observer.
func (m *Metrics) Observe(_ context.Context, o router.Outcome) {
	if o.Refused {
		return // counted by the stage hook
	}
	c := o.Call
	outcome := OutcomeOK
	switch {
	case o.Err != nil:
		outcome = OutcomeFail
	case o.Result != nil && o.Result.IsError:
		outcome = OutcomeError
	}
	m.calls.WithLabelValues(c.Entry.Name, c.Entry.Server, outcome).Inc()
	if !c.Started.IsZero() {
		m.latency.WithLabelValues(c.Entry.Server).Observe(time.Since(c.Started).Seconds())
	}
}

// Counting wraps a policy stage so that each call it refuses counts as a
// rejection for reason. The reason's series exists from then on, at 0,
// so a rate of refusals can be graphed before the first one.
func (m *Metrics) Counting(reason string, st router.Stage) router.Stage {
	if st == nil {
		return nil
	}
	refused := m.rejections.WithLabelValues(reason)
	return router.StageFunc(func(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
		res, err := st.Check(ctx, c)
		if res != nil || err != nil {
			refused.Inc()
		}
		return res, err
	})
}

// Handler serves the registry in the format the scraper asks for (the
// text format by default).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
