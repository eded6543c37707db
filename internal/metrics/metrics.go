// Package metrics exposes the router's counters in the Prometheus text
// format on the HTTP front's /metrics: calls by tool, server and outcome,
// call latency, sessions, children up, pending approvals, and the calls
// the rate limit and the cooldown turned away; with them, the Go
// runtime's and the process's usual series, read at each scrape.
//
// It sees calls through the router's seams only: it is a router.Observer
// for dispatched calls and wraps the policy stages whose refusals it
// counts, so the call path itself knows nothing about it.
//
// The exposition (text format 0.0.4) is written here rather than by the
// Prometheus client library, whose packages' initialisation every evokore
// process paid for at start (see docs/decisions.md); what it printed is
// kept: the same names, labels, buckets, and the client's go_* and
// process_* names for the series kept from its collectors.
package metrics

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// callKey is one series of evokore_tool_calls_total.
type callKey struct{ tool, server, outcome string }

// histogram is one series of the latency histogram; counts are per
// bucket, not cumulative (the last one past the largest bound).
type histogram struct {
	counts []uint64
	sum    float64
}

// Metrics is one router's counters.
type Metrics struct {
	gauges Gauges

	mu         sync.Mutex
	calls      map[callKey]uint64
	latency    map[string]*histogram // by server
	rejections map[string]uint64     // by reason
}

// New builds the counters; g's functions are read at scrape time.
func New(g Gauges) *Metrics {
	return &Metrics{gauges: g, calls: map[callKey]uint64{}, latency: map[string]*histogram{}, rejections: map[string]uint64{}}
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
	var elapsed float64
	if !c.Started.IsZero() {
		elapsed = time.Since(c.Started).Seconds()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls[callKey{c.Entry.Name, c.Entry.Server, outcome}]++
	if c.Started.IsZero() {
		return
	}
	h := m.latency[c.Entry.Server]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(latencyBuckets)+1)}
		m.latency[c.Entry.Server] = h
	}
	// Buckets are upper-inclusive: the first bound >= the value.
	h.counts[sort.SearchFloat64s(latencyBuckets, elapsed)]++
	h.sum += elapsed
}

// Counting wraps a policy stage so that each call it refuses counts as a
// rejection for reason. The reason's series exists from then on, at 0,
// so a rate of refusals can be graphed before the first one.
func (m *Metrics) Counting(reason string, st router.Stage) router.Stage {
	if st == nil {
		return nil
	}
	m.mu.Lock()
	m.rejections[reason] += 0
	m.mu.Unlock()
	return router.StageFunc(func(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
		res, err := st.Check(ctx, c)
		if res != nil || err != nil {
			m.mu.Lock()
			m.rejections[reason]++
			m.mu.Unlock()
		}
		return res, err
	})
}

// ContentType is the exposition's media type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Handler serves the counters in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ContentType)
		_, _ = w.Write(m.Exposition())
	})
}

// Exposition is one scrape's text: families sorted by name, series by
// their labels, so two scrapes of the same state are the same bytes.
func (m *Metrics) Exposition() []byte {
	var fams []family
	m.mu.Lock()
	calls := family{name: "evokore_tool_calls_total", typ: "counter",
		help: "Tool calls dispatched, by tool, child server (\"\" for evokore's own tools) and outcome (ok, error, fail)."}
	for k, n := range m.calls {
		calls.add("", float64(n), "outcome", k.outcome, "server", k.server, "tool", k.tool)
	}
	latency := family{name: "evokore_tool_call_duration_seconds", typ: "histogram",
		help: "Time from dispatch to answer of tool calls, by child server."}
	for server, h := range m.latency {
		latency.addHistogram(h, "server", server)
	}
	rejections := family{name: "evokore_call_rejections_total", typ: "counter",
		help: "Calls refused before dispatch, by reason (rate_limit, cooldown)."}
	for reason, n := range m.rejections {
		rejections.add("", float64(n), "reason", reason)
	}
	m.mu.Unlock()
	fams = append(fams, calls, latency, rejections)
	gauge := func(name, help string, f func() int) {
		if f != nil {
			g := family{name: name, typ: "gauge", help: help}
			g.add("", float64(f()))
			fams = append(fams, g)
		}
	}
	gauge("evokore_sessions", "MCP sessions this process serves.", m.gauges.Sessions)
	gauge("evokore_children_up", "Child servers connected.", m.gauges.ChildrenUp)
	gauge("evokore_pending_approvals", "Approvals waiting for a decision.", m.gauges.PendingApprovals)
	fams = append(fams, goFamilies()...)
	fams = append(fams, processFamilies()...)
	slices.SortFunc(fams, func(a, b family) int { return strings.Compare(a.name, b.name) })
	var out []byte
	for _, f := range fams {
		out = f.appendText(out)
	}
	return out
}
