package server_test

//lint:file-ignore SA1019 sampling, roots and logging pass through on purpose; see docs/decisions.md

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// sampler answers sampling requests as who and counts them.
func sampler(who string, n *atomic.Int32) *mcp.ClientOptions {
	return &mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		n.Add(1)
		return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: who}}, nil
	}}
}

// A child's sampling request during session A's call goes to A's client
// and never to B's, whoever called the child last.
func TestSamplingGoesToTheCallingSession(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	var na, nb atomic.Int32
	b := h.Connect(sampler("B", &nb))
	a := h.Connect(sampler("A", &na))
	h.Booted()
	// B was the child's last caller before A's call.
	routertest.Call(t, b, "fx_echo", map[string]any{"message": "hi"})
	res := routertest.Call(t, a, "fx_sample", map[string]any{"prompt": "p"})
	if got := routertest.Text(res); got != "sampled: A" {
		t.Errorf("A's fx_sample = %q, want A's client to answer", got)
	}
	if na.Load() != 1 || nb.Load() != 0 {
		t.Errorf("sampling requests seen: A %d, B %d; want 1, 0", na.Load(), nb.Load())
	}
}

// A calling session whose client cannot sample gets a refusal; the request
// is never handed to another session that can.
func TestSamplingNeverFallsBackToAnotherSession(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	var nb atomic.Int32
	// B connects first, so children are offered sampling.
	h.Connect(sampler("B", &nb))
	a := h.Connect(nil)
	h.Booted()
	res := routertest.Call(t, a, "fx_sample", map[string]any{"prompt": "secret prompt of A"})
	if !res.IsError || !strings.Contains(routertest.Text(res), "sampling failed") {
		t.Errorf("fx_sample from a client without sampling = %q", routertest.Text(res))
	}
	if nb.Load() != 0 {
		t.Errorf("B's client saw %d of A's sampling requests", nb.Load())
	}
}

// While calls from two sessions are open to one child, its sampling
// request cannot be attributed and is refused rather than guessed.
func TestSamplingRefusedWhenTwoSessionsHaveCallsOpen(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	var na, nb atomic.Int32
	b := h.Connect(sampler("B", &nb))
	a := h.Connect(sampler("A", &na))
	h.Booted()
	slow := make(chan *mcp.CallToolResult, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		res, _ := b.CallTool(ctx, &mcp.CallToolParams{Name: "fx_slow", Arguments: map[string]any{"ms": 60000}})
		slow <- res
	}()
	routertest.WaitFor(t, "B's slow call to be open", func() bool { return h.Server.OpenCalls("fx") == 1 })
	res := routertest.Call(t, a, "fx_sample", map[string]any{"prompt": "p"})
	if !res.IsError || !strings.Contains(routertest.Text(res), "cannot tell which client session") {
		t.Errorf("fx_sample while B's call is open = %q", routertest.Text(res))
	}
	if na.Load() != 0 || nb.Load() != 0 {
		t.Errorf("sampling requests seen: A %d, B %d; want none", na.Load(), nb.Load())
	}
	cancel()
	<-slow
}

// Outside any call, a child's sampling or elicitation request reaches no
// one, even with exactly one session connected: that session did not
// cause it, and asking its user to approve a completion or fill a form
// for someone else is worse than not asking. (Roots and log messages,
// which ask no one anything, do go to the lone session.)
func TestRequestsOutsideACallReachNoSessionEvenALoneOne(t *testing.T) {
	for _, kind := range []string{"sampling", "elicitation"} {
		t.Run(kind, func(t *testing.T) {
			h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
			var n atomic.Int32
			opts := sampler("A", &n)
			opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				n.Add(1)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "A"}}, nil
			}
			a := h.Connect(opts)
			h.Booted()
			file := filepath.Join(t.TempDir(), "ask")
			routertest.Call(t, a, "fx_ask_later", map[string]any{"kind": kind, "file": file})
			routertest.WaitFor(t, "the call to end", func() bool { return h.Server.OpenCalls("fx") == 0 })
			if err := os.WriteFile(file, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			var outcome string
			routertest.WaitFor(t, "the child's request to be answered", func() bool {
				b, err := os.ReadFile(file + ".out")
				outcome = string(b)
				return err == nil
			})
			if n.Load() != 0 || !strings.Contains(outcome, "cannot tell which client session") {
				t.Errorf("the lone session's client was asked %d times; the child got %q", n.Load(), outcome)
			}
		})
	}
}
