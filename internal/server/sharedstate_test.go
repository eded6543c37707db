package server_test

import (
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// New dials nothing, Redis included: the shared state is reached at
// Start. Until then, and after a Start that could not reach it, an
// approval-gated call is refused, never run on local state.
func TestNewDialsRedisOnlyAtStart(t *testing.T) {
	// A listener that is not Redis: it counts the connections and hangs
	// up, so the dial at Start fails at once.
	addr, dialed := testutil.HangUpListener(t)
	h := routertest.New(t, map[string]any{}, map[string]string{
		"EVOKORE_SESSION_STORE": "redis",
		"EVOKORE_REDIS_URL":     "redis://" + addr,
	})
	select {
	case <-dialed:
		t.Fatal("New dialed Redis")
	default:
	}
	cs := h.Connect(nil) // starts the server
	<-dialed
	text, isErr := routertest.CallText(t, cs, "fleet_spawn", map[string]any{"command": "true"})
	if !isErr || !strings.Contains(text, "approvals cannot be checked") || !strings.Contains(text, "does not answer") {
		t.Errorf("approval-gated call with Redis unreachable = %v %q", isErr, text)
	}
	if p := strings.Join(h.Server.Problems(), "\n"); !strings.Contains(p, "shared state unavailable") {
		t.Errorf("problems do not name the shared state: %q", p)
	}
}
