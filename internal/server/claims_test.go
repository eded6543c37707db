package server_test

import (
	"testing"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// timeouts.{bootMs,requestMs} in a server's entry win over the global
// defaults (30 s boot, 60 s per call), for that server only.
func TestPerServerTimeouts(t *testing.T) {
	fx := routertest.Fixture(t)
	fx["timeouts"] = map[string]any{"requestMs": 300}
	slow := routertest.Fixture(t, "-start-delay", "3s")
	slow["timeouts"] = map[string]any{"bootMs": 700}
	h := routertest.New(t, map[string]any{"fx": fx, "slowboot": slow}, legacy)
	cs := h.Connect(nil)
	h.Booted()
	res := routertest.Call(t, cs, "fx_slow", map[string]any{"ms": 5000})
	if !res.IsError || routertest.Text(res) != "Proxied tool 'slow' on server 'fx' timed out after 300ms" {
		t.Errorf("requestMs: isError=%v %q", res.IsError, routertest.Text(res))
	}
	found := false
	for _, s := range routertest.Status(t, cs).Servers {
		if s.ID != "slowboot" {
			continue
		}
		found = true
		// After the failed boot the supervisor may already be booting it
		// again: the status is error or booting, never connected.
		if s.Status == "connected" || s.LastError != "Timed out connecting to child server 'slowboot' after 700ms" {
			t.Errorf("bootMs: %+v", s)
		}
	}
	if !found {
		t.Error("bootMs: slowboot is missing from the status")
	}
}
