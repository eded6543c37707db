package main_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
)

// BenchmarkHTTPSessionsEcho runs 64 concurrent MCP sessions over
// streamable HTTP, each making echo calls, through `evokore serve --http`
// (the call passes the router to a stdio fixture child) and directly
// against the fixture serving streamable HTTP itself. Each iteration is
// 64 sessions × 20 calls; calls/s, p50 and p99 are reported, and the
// ratio of the two sub-benchmarks is the router's cost.
func BenchmarkHTTPSessionsEcho(b *testing.B) {
	const sessions, calls = 64, 20
	b.Run("router", func(b *testing.B) {
		base, cmd, _ := httpRouter(b, "EVOKORE_TOOL_DISCOVERY_MODE=legacy")
		benchEcho(b, base+"/mcp", "fx_echo", sessions, calls)
		// The router's own memory with the 64 sessions open.
		if m, err := smapsMemory(cmd.Process.Pid); err == nil {
			b.ReportMetric(m.private, "private-MiB")
			b.ReportMetric(m.pss, "pss-MiB")
		}
	})
	b.Run("direct", func(b *testing.B) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		child := exec.Command(testutil.FixtureServer(b), "-http", addr)
		if err := child.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
		benchEcho(b, "http://"+addr+"/", "echo", sessions, calls)
	})
}

func benchEcho(b *testing.B, endpoint, tool string, sessions, calls int) {
	clients := make([]*mcp.ClientSession, sessions)
	for i := range clients {
		var cs *mcp.ClientSession
		var err error
		// The endpoint may still be starting: wait for it to answer.
		for deadline := time.Now().Add(30 * time.Second); ; {
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err = c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{}}, nil)
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cs.Close() })
		clients[i] = cs
	}
	// The first call waits for the child to boot; not measured.
	for deadline := time.Now().Add(60 * time.Second); ; {
		res, err := clients[0].CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"message": "warm"}})
		if err == nil && !res.IsError {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("echo never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var mu sync.Mutex
	var lat []time.Duration
	lost := 0
	start := time.Now()
	for b.Loop() {
		var wg sync.WaitGroup
		for i, cs := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine := make([]time.Duration, 0, calls)
				bad := 0
				for j := range calls {
					t0 := time.Now()
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"message": fmt.Sprint(i, "-", j)}})
					if err != nil || res.IsError {
						bad++
						continue
					}
					mine = append(mine, time.Since(t0))
				}
				mu.Lock()
				lat = append(lat, mine...)
				lost += bad
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	elapsed := time.Since(start)
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "calls/s")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
	}
	b.ReportMetric(float64(lost), "lost")
}
