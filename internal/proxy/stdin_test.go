//go:build unix

package proxy_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A child that stops reading its stdin does not wedge its calls: each
// ends by the request timeout, the one whose request no longer fits in
// the pipe with the stopped-reading message; the child is stopped and
// restarted as a crashed one would be, and the router, its native tools
// and the other children serve meanwhile. The calls come through the
// SDK's server (an in-memory client session takes no fast path) and reach
// the child over the wire, as every call does; the fast path's case is
// cmd/evokore's TestFastPathChildThatStopsReadingStdin.
func TestChildThatStopsReadingStdinIsRestarted(t *testing.T) {
	const timeout = 400 * time.Millisecond
	h := routertest.New(t, map[string]any{"deaf": routertest.Fixture(t, "-deaf"), "other": routertest.Fixture(t)},
		with(legacy, map[string]string{"EVOKORE_PROXY_REQUEST_TIMEOUT_MS": strconv.Itoa(int(timeout.Milliseconds()))}))
	cs := h.Connect(nil)
	h.Booted()
	pid, _ := routertest.CallText(t, cs, "deaf_pid", map[string]any{})

	// Bounded by the test, so a wedged call fails it instead of hanging.
	call := func(name string, args map[string]any) (string, time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v (after %v)\n%s", name, err, time.Since(start), h.Stderr.String())
		}
		return routertest.Text(res), time.Since(start)
	}
	// The child stops reading and never answers: the request timeout.
	if got, took := call("deaf_deaf", map[string]any{}); got != proxy.MsgCallTimeout("deaf", "deaf", timeout) {
		t.Fatalf("deaf = %q after %v", got, took)
	}
	// Four times what a pipe holds: the write blocks until its bound.
	big := map[string]any{"message": strings.Repeat("x", 256<<10)}
	got, _ := call("deaf_echo", big)
	if got != proxy.MsgStoppedReading("echo", "deaf", timeout) && got != proxy.MsgCallTimeout("echo", "deaf", timeout) {
		t.Fatalf("a call to a child that reads nothing = %.300q", got)
	}
	routertest.WaitFor(t, "deaf to show down", func() bool { return routertest.StatusOf(t, cs, "deaf") != "connected" })
	// Another child and a native tool serve meanwhile.
	if got, _ := call("other_echo", map[string]any{"message": "fine"}); got != "Echo: fine" {
		t.Errorf("other_echo = %q", got)
	}
	// The child is restarted: a new process, which serves.
	routertest.WaitFor(t, "deaf to be restarted", func() bool { return routertest.StatusOf(t, cs, "deaf") == "connected" })
	if now, _ := call("deaf_pid", map[string]any{}); now == pid {
		t.Errorf("deaf still runs as %s", pid)
	}
	if got, _ := call("deaf_echo", map[string]any{"message": "back"}); got != "Echo: back" {
		t.Errorf("after the restart, deaf_echo = %q", got)
	}
	if !strings.Contains(h.Stderr.String(), "A server stopped reading its input; stopping it") {
		t.Errorf("stderr does not say why deaf was stopped:\n%s", h.Stderr.String())
	}
	p, _ := strconv.Atoi(pid)
	routertest.WaitGone(t, 10*time.Second, p)
}
