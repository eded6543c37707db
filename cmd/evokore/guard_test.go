package main_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A real `serve --http`: one local process holding more connections than
// a client's cap (every local process shares its address) turns no one
// away: /health answers ok and another local client starts an MCP
// session and calls a tool. The per-address cap used to answer both 503.
func TestServeHTTPHealthAndMCPAnswerPastOneClientsConnections(t *testing.T) {
	base, _, stderr := httpRouter(t)
	addr := strings.TrimPrefix(base, "http://")
	for i := range 300 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		// Each asks once and keeps its connection open, as a client's
		// pool does.
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("held connection %d: %v %v", i, res, err)
		}
		_ = res.Body.Close()
	}
	if code, _, body := do(t, "GET", base+"/health", "", nil, ""); code != 200 || !strings.Contains(body, `"status":"ok"`) {
		t.Errorf("/health past 300 connections of one address: %d %s", code, body)
	}
	cs, err := connectWith(t, base+"/mcp", "", nil)
	if err != nil {
		t.Fatalf("an MCP client past 300 connections of one address: %v\n%s", err, stderr.String())
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Errorf("tools/list: %v", err)
	}
}
