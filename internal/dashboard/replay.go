package dashboard

import (
	"context"
	"fmt"
	"sort"
	"time"
	"unicode/utf8"
)

// Event is one row of a replay's timeline: a tool call or an evidence
// item.
type Event struct {
	TS      int64
	Kind    string // call or evidence
	Tool    string
	Summary string
	Outcome string
	// LatencyMs is the call's duration when the writer recorded it
	// (the router does; the hooks do not): -1 when unknown.
	LatencyMs float64
	Error     bool
}

// Time is TS as a time.
func (e Event) Time() time.Time { return msTime(e.TS) }

// ToolCount is one row of the top tools.
type ToolCount struct {
	Tool  string
	Calls int
}

// Replay is what the replay page shows of one session.
type Replay struct {
	ID       string
	Events   []Event
	Calls    int
	Evidence int
	Errors   int
	Tools    int
	Top      []ToolCount
	Chart    Chart
}

// maxTimeline bounds the rows the page renders (the newest are kept);
// the JSON APIs return everything read.
const maxTimeline = 2000

func loadReplay(ctx context.Context, home, id string) Replay {
	r := Replay{ID: id}
	byTool := map[string]int{}
	for _, e := range readLines(ctx, replayPath(home, id)) {
		ev := Event{Kind: "call", TS: parseTime(first(e, "ts", "timestamp")), Tool: str(first(e, "tool", "toolName")),
			Summary: str(first(e, "summary")), Outcome: str(first(e, "outcome")), LatencyMs: -1}
		if ev.Summary == "" {
			ev.Summary = str(first(e, "output"))
		}
		if v, ok := first(e, "latency_ms", "latencyMs", "duration_ms", "durationMs").(float64); ok && v >= 0 {
			ev.LatencyMs = v
		}
		ev.Error = ev.Outcome == "error" || first(e, "is_error", "isError") == true
		if ev.Error {
			r.Errors++
		}
		r.Calls++
		if ev.Tool != "" {
			byTool[ev.Tool]++
		}
		r.Events = append(r.Events, ev)
	}
	for _, e := range readLines(ctx, evidencePath(home, id)) {
		// The hooks write evidence_id; EVOKORE-MCP's page read evidenceId
		// and so always fell back to the type.
		tool := str(first(e, "tool"))
		label := str(first(e, "evidence_id", "evidenceId"))
		typ := str(first(e, "type"))
		ev := Event{Kind: "evidence", TS: parseTime(first(e, "ts", "timestamp")), Tool: tool,
			Summary: joinNonEmpty(label, typ, str(first(e, "summary", "file"))), LatencyMs: -1}
		if p, ok := e["passed"].(bool); ok && !p {
			ev.Error, ev.Outcome = true, "failed"
		}
		if e["is_error"] == true {
			ev.Error, ev.Outcome = true, "error"
		}
		r.Evidence++
		r.Events = append(r.Events, ev)
	}
	sort.SliceStable(r.Events, func(i, j int) bool { return r.Events[i].TS < r.Events[j].TS })
	for i := range r.Events {
		r.Events[i].Summary = clip(r.Events[i].Summary, maxSummary)
		r.Events[i].Tool = clip(r.Events[i].Tool, 200)
	}
	r.Chart = buildChart(r.Events)
	if len(r.Events) > maxTimeline {
		r.Events = r.Events[len(r.Events)-maxTimeline:]
	}
	r.Tools = len(byTool)
	for t, n := range byTool {
		r.Top = append(r.Top, ToolCount{t, n})
	}
	sort.Slice(r.Top, func(i, j int) bool {
		if r.Top[i].Calls != r.Top[j].Calls {
			return r.Top[i].Calls > r.Top[j].Calls
		}
		return r.Top[i].Tool < r.Top[j].Tool
	})
	if len(r.Top) > 8 {
		r.Top = r.Top[:8]
	}
	return r
}

// maxSummary bounds a summary on the page (the JSON API has it whole).
const maxSummary = 500

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func joinNonEmpty(parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += " · "
		}
		out += p
	}
	return out
}

// Chart is a small SVG chart of calls per time bucket (bars, errors in
// their own colour) and the mean latency per bucket (a line), in the
// coordinates of a 600×160 viewBox; the template draws it, so every value
// passes html/template's escaping.
type Chart struct {
	Empty      bool
	Bars       []Bar
	Line       string // SVG points of the latency line, "" when no latency was recorded
	MaxCalls   int
	MaxLatency string
	From, To   string
}

// Bar is one bucket's bar.
type Bar struct {
	X, W        float64
	Y, H        float64 // all calls
	ErrY, ErrH  float64 // the errors among them
	Calls, Errs int
	Label       string
}

const (
	chartW, chartH = 600.0, 160.0
	chartBuckets   = 30
)

func buildChart(events []Event) Chart {
	var calls []Event
	for _, e := range events {
		if e.Kind == "call" && e.TS > 0 {
			calls = append(calls, e)
		}
	}
	if len(calls) == 0 {
		return Chart{Empty: true}
	}
	lo, hi := calls[0].TS, calls[len(calls)-1].TS
	span := hi - lo + 1
	n := chartBuckets
	if len(calls) < n {
		n = len(calls)
	}
	type bucket struct {
		calls, errs int
		lat         float64
		latN        int
	}
	bs := make([]bucket, n)
	for _, c := range calls {
		i := int((c.TS - lo) * int64(n) / span)
		i = min(max(i, 0), n-1)
		bs[i].calls++
		if c.Error {
			bs[i].errs++
		}
		if c.LatencyMs >= 0 {
			bs[i].lat += c.LatencyMs
			bs[i].latN++
		}
	}
	ch := Chart{From: time.UnixMilli(lo).UTC().Format("2006-01-02 15:04:05"), To: time.UnixMilli(hi).UTC().Format("2006-01-02 15:04:05")}
	maxLat := 0.0
	for _, b := range bs {
		ch.MaxCalls = max(ch.MaxCalls, b.calls)
		if b.latN > 0 {
			maxLat = max(maxLat, b.lat/float64(b.latN))
		}
	}
	w := chartW / float64(n)
	for i, b := range bs {
		h := chartH * float64(b.calls) / float64(ch.MaxCalls)
		eh := chartH * float64(b.errs) / float64(ch.MaxCalls)
		ch.Bars = append(ch.Bars, Bar{X: float64(i)*w + 1, W: max(w-2, 1), Y: chartH - h, H: h, ErrY: chartH - eh, ErrH: eh,
			Calls: b.calls, Errs: b.errs, Label: fmt.Sprintf("%d calls, %d errors", b.calls, b.errs)})
		if b.latN > 0 && maxLat > 0 {
			y := chartH - chartH*0.95*(b.lat/float64(b.latN))/maxLat
			if ch.Line != "" {
				ch.Line += " "
			}
			ch.Line += fmt.Sprintf("%.1f,%.1f", float64(i)*w+w/2, y)
		}
	}
	if maxLat > 0 {
		ch.MaxLatency = fmt.Sprintf("%.0f ms", maxLat)
	}
	return ch
}
