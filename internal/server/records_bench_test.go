package server_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/records"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// BenchmarkToolCallWebhooks measures a native tool call through the whole
// pipeline (audit log, session replay, webhooks on) with no webhook, a
// webhook whose receiver answers at once, one whose receiver never
// answers (hangs until the benchmark ends), and one whose port refuses
// connections. A webhook must never slow a call: the four are within
// noise of each other.
func BenchmarkToolCallWebhooks(b *testing.B) {
	stop := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer hanging.Close()
	defer close(stop)
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer fast.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()

	for _, tc := range []struct{ name, url string }{{"none", ""}, {"fast", fast.URL}, {"hanging", hanging.URL}, {"dead", dead}} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			cfg := map[string]any{"servers": map[string]any{}}
			if tc.url != "" {
				cfg["webhooks"] = []any{map[string]any{"url": tc.url, "events": []string{"tool_call"}, "secret": "bench"}}
			}
			path := testutil.WriteJSON(b, dir, "mcp.config.json", cfg)
			h := routertest.NewWithConfig(b, dir, path, map[string]string{"EVOKORE_WEBHOOKS_ALLOW_PRIVATE": "true"})
			cs := h.Connect(nil)
			params := &mcp.CallToolParams{Name: "claim_list", Arguments: map[string]any{}}
			b.ResetTimer()
			for b.Loop() {
				if _, err := cs.CallTool(context.Background(), params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecords measures what recording one proxied call costs: the
// recorders a router runs after the answer (tool_call event into the
// audit log, session replay line, trust ledger), with the writers'
// batches drained inside the timing, so B/op and allocs/op count the
// writer goroutines too. cpu-ns/op is the process's CPU time (user and
// system, all goroutines, the collector included) per call, which is
// what limits throughput when calls run in parallel. The arguments are
// small and plain, hold secret keys (masked), or are a 4 KiB file write.
func BenchmarkRecords(b *testing.B) {
	content := strings.Repeat("func main() {\n\tfmt.Println(\"hello, <world> & \\u00e9t\u00e9\")\n}\n", 64)
	large, _ := json.Marshal(map[string]any{"path": "/src/main.go", "content": content, "mode": 420})
	for _, tc := range []struct{ name, args string }{
		{"plain", `{"query":"repo:evokore/evokore is:open label:bug","per_page":30,"page":1,"sort":"updated"}`},
		{"secret", `{"query":"deploy","api_key":"sk-live-0123456789abcdef","options":{"retries":3,"password":"hunter22"}}`},
		{"large", string(large)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			home := b.TempDir()
			env := config.NewEnv(map[string]string{"GH_TOKEN": "ghp_benchsecret0123456789"})
			cfg := &config.MCPConfig{Servers: []config.Server{{ID: "github", Command: "github-mcp",
				Env: map[string]string{"GITHUB_TOKEN": "${GH_TOKEN}"}}}}
			rs := records.Open(records.Options{Settings: records.Settings{AuditLog: true, SessionReplay: true}, Home: home, Env: env, Config: cfg})
			recs, closeAll := rs.Observers(), rs.Close
			entry := &catalog.Entry{Name: "github_search", Server: "github", Source: catalog.SourceProxy}
			sess := &session.Session{ID: "stdio-0b6f2c1e-bench", Role: "dev"}
			stand := &mcp.CallToolResult{}
			raw := []byte(`{"content":[{"type":"text","text":"Found 3 issues: #12 panic on reload, #15 slow start, #18 audit rotation"}]}`)
			args := json.RawMessage(tc.args)
			ctx := context.Background()
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c := &router.Call{Entry: entry, Session: sess, Args: args, Started: time.Now(),
					Raw: &router.RawResult{Bytes: raw, Result: stand}}
				for _, r := range recs {
					r.Observe(ctx, router.Outcome{Call: c, Result: stand})
				}
			}
			closeAll()
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
