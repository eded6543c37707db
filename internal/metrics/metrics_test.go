package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/metrics"
	"github.com/evokore/evokore/internal/router"
)

// Calls are counted by tool, server and outcome; stage refusals by
// reason; the gauges read their functions at scrape time.
func TestCountsCallsRejectionsAndGauges(t *testing.T) {
	sessions := 3
	m := metrics.New(metrics.Gauges{Sessions: func() int { return sessions }, ChildrenUp: func() int { return 2 }, PendingApprovals: func() int { return 1 }})
	c := &router.Call{Entry: &catalog.Entry{Name: "fx_echo", Server: "fx"}, Started: time.Now()}
	m.Observe(context.Background(), router.Outcome{Call: c, Result: &mcp.CallToolResult{}, Err: nil})
	m.Observe(context.Background(), router.Outcome{Call: c, Result: &mcp.CallToolResult{IsError: true}, Err: nil})
	m.Observe(context.Background(), router.Outcome{Call: c, Result: nil, Err: errors.New("boom")})
	refuse := m.Counting("rate_limit", router.StageFunc(func(context.Context, *router.Call) (*mcp.CallToolResult, error) {
		return nil, errors.New("Rate limit exceeded")
	}))
	pass := m.Counting("cooldown", router.StageFunc(func(context.Context, *router.Call) (*mcp.CallToolResult, error) { return nil, nil }))
	_, _ = refuse.Check(context.Background(), c)
	_, _ = pass.Check(context.Background(), c)
	sessions = 5
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`evokore_tool_calls_total{outcome="ok",server="fx",tool="fx_echo"} 1`,
		`evokore_tool_calls_total{outcome="error",server="fx",tool="fx_echo"} 1`,
		`evokore_tool_calls_total{outcome="fail",server="fx",tool="fx_echo"} 1`,
		`evokore_tool_call_duration_seconds_count{server="fx"} 3`,
		`evokore_call_rejections_total{reason="rate_limit"} 1`,
		"evokore_sessions 5", "evokore_children_up 2", "evokore_pending_approvals 1",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(string(body), `reason="cooldown"} 1`) {
		t.Error("a stage that passed counted a rejection")
	}
}
