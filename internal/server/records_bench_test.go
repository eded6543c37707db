package server_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
