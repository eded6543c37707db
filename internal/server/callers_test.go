package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// subjectHeader names, in these tests, the subject an HTTP request acts
// for, as a verified token would.
const subjectHeader = "X-Test-Subject"

// asSubject sends every request with the subject header.
type asSubject struct{ subject string }

func (a asSubject) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(subjectHeader, a.subject)
	return http.DefaultTransport.RoundTrip(r)
}

// callersHarness is a router over two fixture children, "fx" with the
// default limit scope (each caller its own) and "gx" with limitScope
// "global", both with the given rateLimit (nil: none), served over
// streamable HTTP where the subject header says who calls.
func callersHarness(t *testing.T, rateLimit map[string]any, clk *clock) (*routertest.Harness, string) {
	t.Helper()
	dir := t.TempDir()
	fx, gx := routertest.Fixture(t), routertest.Fixture(t)
	gx["limitScope"] = "global"
	if rateLimit != nil {
		fx["rateLimit"], gx["rateLimit"] = rateLimit, rateLimit
	}
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"fx": fx, "gx": gx}})
	h := routertest.NewWithOptions(t, dir, cfg, map[string]string{"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "10000"}, clk.Now)
	ts := httptest.NewServer(h.HTTP(func(r *http.Request) ingress.SessionOptions {
		return ingress.SessionOptions{Identity: session.Identity{Subject: r.Header.Get(subjectHeader), Tenant: "team"}}
	}, nil))
	t.Cleanup(ts.Close)
	return h, ts.URL
}

// connectSubject connects a client over HTTP acting for subject,
// speaking version: "2025-11-25" opens a session, "2026-07-28" has none.
func connectSubject(t *testing.T, url, subject, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: subject, Version: "1"}, nil)
	ct := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: asSubject{subject}}}
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != version {
		t.Fatalf("%s negotiated %s, want %s", subject, v, version)
	}
	return cs
}

const coolingText = "[EVOKORE COOLDOWN] Tool '%s' is currently on cooldown to prevent infinite loops. Please wait 10 seconds or try a different approach."

// A failing call cools down that caller's identical call only: another
// subject, in the other protocol era, still reaches the child, while
// the same subject is cooled whichever era it speaks; two sessions
// without a subject are two callers. A server whose limitScope is
// "global" cools everyone's.
func TestOneCallersFailureDoesNotCoolAnothersCall(t *testing.T) {
	clk := newClock()
	h, url := callersHarness(t, nil, clk)
	anonA := h.Connect(nil)
	anonB := h.Connect(nil)
	h.Booted()
	alice := connectSubject(t, url, "alice", "2025-11-25")
	aliceNew := connectSubject(t, url, "alice", "2026-07-28")
	bob := connectSubject(t, url, "bob", "2026-07-28")
	boom := map[string]any{"message": "boom"}
	expect := func(who string, cs *mcp.ClientSession, tool, want string) {
		t.Helper()
		if got := routertest.Text(routertest.Call(t, cs, tool, boom)); got != want {
			t.Errorf("%s calling %s: %q, want %q", who, tool, got, want)
		}
	}
	cooling := func(tool string) string { return fmt.Sprintf(coolingText, tool) }

	expect("alice", alice, "fx_fail", "failed: boom")
	expect("alice again", alice, "fx_fail", cooling("fx_fail"))
	expect("alice in the new era", aliceNew, "fx_fail", cooling("fx_fail"))
	expect("bob in the new era", bob, "fx_fail", "failed: boom")
	expect("a session without a subject", anonA, "fx_fail", "failed: boom")
	expect("that session again", anonA, "fx_fail", cooling("fx_fail"))
	expect("another session without a subject", anonB, "fx_fail", "failed: boom")

	expect("alice on the global server", alice, "gx_fail", "failed: boom")
	expect("bob on the global server", bob, "gx_fail", cooling("gx_fail"))
	expect("a session on the global server", anonA, "gx_fail", cooling("gx_fail"))
}

// One caller's rate does not limit another's: each subject (whatever
// its era) and each session without a subject spends buckets of its
// own; a server whose limitScope is "global" has one bucket for all.
func TestOneCallersRateDoesNotLimitAnother(t *testing.T) {
	clk := newClock()
	h, url := callersHarness(t, map[string]any{"maxTokens": 2, "refillRate": 1, "refillIntervalMs": 60000}, clk)
	anon := h.Connect(nil)
	h.Booted()
	alice := connectSubject(t, url, "alice", "2025-11-25")
	aliceNew := connectSubject(t, url, "alice", "2026-07-28")
	bob := connectSubject(t, url, "bob", "2026-07-28")
	echo := map[string]any{"message": "m"}
	for server, want := range map[string]string{"fx": "", "gx": "Rate limit exceeded for server 'gx'. Retry after 60s."} {
		tool := server + "_echo"
		routertest.Call(t, alice, tool, echo)
		routertest.Call(t, aliceNew, tool, echo)
		if we := rpcError(t, alice, tool, echo); we.Message != "Rate limit exceeded for server '"+server+"'. Retry after 60s." {
			t.Errorf("alice's third call to %s: %q", server, we.Message)
		}
		for who, cs := range map[string]*mcp.ClientSession{"bob": bob, "a session without a subject": anon} {
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: echo})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(got, want)) {
				t.Errorf("%s calling %s after alice spent her budget: %q, want %q", who, tool, got, want)
			}
		}
	}
	clk.Advance(time.Minute)
	if res := routertest.Call(t, alice, "fx_echo", echo); res.IsError {
		t.Errorf("alice after a refill: %s", routertest.Text(res))
	}
}
