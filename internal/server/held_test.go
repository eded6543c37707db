package server_test

//lint:file-ignore SA1019 sampling passes through on purpose; see docs/decisions.md

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// everythingRouter serves server-everything (which speaks 2025-11-25
// alone) over HTTP, each request acting for the subject its test header
// names. A 2025-11-25 session that answers sampling and elicitation
// boots it, so it registers its tools that ask for them.
func everythingRouter(t *testing.T, env map[string]string) (*routertest.Harness, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{testutil.NPMServer(t, "server-everything"), "stdio"}},
	}})
	vars := map[string]string{"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "20000", "EVOKORE_TOOL_DISCOVERY_MODE": "legacy"}
	for k, v := range env {
		vars[k] = v
	}
	h, url := instanceRouter(t, dir, cfg, vars)
	c := mcp.NewClient(&mcp.Implementation{Name: "boot", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			t.Error("the booting session was asked to sample")
			return nil, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the booting session was asked to elicit")
			return nil, nil
		},
	})
	ct := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: asSubject{"boot"}}}
	boot, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = boot.Close() })
	h.Booted()
	routertest.WaitFor(t, "everything's sampling tool listed", func() bool {
		for _, name := range routertest.ToolNames(t, boot) {
			if name == "everything_trigger-sampling-request" {
				return true
			}
		}
		return false
	})
	return h, url
}

// newEraSubject is a go-sdk client of 2026-07-28 acting for subject that
// declares sampling and elicitation and handles input_required itself.
func newEraSubject(t *testing.T, url, subject string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: subject, Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			t.Errorf("%s was sent a sampling request", subject)
			return nil, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Errorf("%s was sent an elicitation request", subject)
			return nil, nil
		},
	})
	ct := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: asSubject{subject}}}
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the new-era client negotiated %s", v)
	}
	return cs
}

// retry sends a call again with answer to its one input request.
func retry(cs *mcp.ClientSession, name string, args map[string]any, first *mcp.CallToolResult, answer mcp.InputResponse) (*mcp.CallToolResult, error) {
	responses := mcp.InputResponseMap{}
	for id := range first.InputRequests {
		responses[id] = answer
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, InputResponses: responses, RequestState: first.RequestState})
}

// A 2025-11-25 child's sampling and elicitation requests during calls of
// 2026-07-28 callers (sessionless, over HTTP) reach the caller as
// input_required with the child's request; the retry with the answer
// completes the call once, with the answer in the child's result. The
// same retry sent again, or sent by another subject, is refused.
func TestOldEraChildAsksANewEraCallerByInputRequired(t *testing.T) {
	if testing.Short() {
		t.Skip("npm reference servers: not in -short")
	}
	_, url := everythingRouter(t, nil)
	alice, bob := newEraSubject(t, url, "alice"), newEraSubject(t, url, "bob")
	for _, tc := range []struct {
		tool   string
		args   map[string]any
		answer mcp.InputResponse
		asked  func(mcp.InputRequest) bool
		want   string
	}{{
		tool:   "everything_trigger-sampling-request",
		args:   map[string]any{"prompt": "the ocean", "maxTokens": 20},
		answer: &mcp.CreateMessageResult{Role: "assistant", Model: "alice-model", Content: &mcp.TextContent{Text: "waves from alice"}},
		asked: func(r mcp.InputRequest) bool {
			p, ok := r.(*mcp.CreateMessageWithToolsParams)
			return ok && len(p.Messages) == 1 && strings.Contains(routertest.Text(&mcp.CallToolResult{Content: p.Messages[0].Content}), "the ocean")
		},
		want: "waves from alice",
	}, {
		tool:   "everything_trigger-elicitation-request",
		args:   map[string]any{},
		answer: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Alice Liddell"}},
		asked: func(r mcp.InputRequest) bool {
			p, ok := r.(*mcp.ElicitParams)
			return ok && strings.HasPrefix(p.Message, "The 'everything' server asks: ")
		},
		want: "Alice Liddell",
	}} {
		first, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		if len(first.InputRequests) != 1 || first.RequestState == "" {
			t.Fatalf("%s answered %+v, want input_required with one request", tc.tool, first)
		}
		for _, r := range first.InputRequests {
			if !tc.asked(r) {
				t.Errorf("%s asked %#v", tc.tool, r)
			}
		}
		if _, err := retry(bob, tc.tool, tc.args, first, tc.answer); err == nil || !strings.Contains(err.Error(), "belongs to another call") {
			t.Errorf("bob's retry of alice's %s: %v", tc.tool, err)
		}
		res, err := retry(alice, tc.tool, tc.args, first, tc.answer)
		if err != nil || res.IsError || len(res.InputRequests) != 0 || !strings.Contains(routertest.Text(res), tc.want) {
			t.Fatalf("alice's retry of %s: %v, %+v", tc.tool, err, res)
		}
		if _, err := retry(alice, tc.tool, tc.args, first, tc.answer); err == nil || !strings.Contains(err.Error(), "no longer held") {
			t.Errorf("alice's replayed retry of %s: %v", tc.tool, err)
		}
	}
}

// A held call ends when its caller does not answer within
// EVOKORE_INPUT_HOLD_MS (the child's request is answered with an error,
// its call ends) and when the router stops: nothing of it stays open,
// and a late retry is refused, saying to call again.
func TestHeldCallEndsUnanswered(t *testing.T) {
	if testing.Short() {
		t.Skip("npm reference servers: not in -short")
	}
	h, url := everythingRouter(t, map[string]string{"EVOKORE_INPUT_HOLD_MS": "300"})
	alice := newEraSubject(t, url, "alice")
	tool, args := "everything_trigger-elicitation-request", map[string]any{}
	first, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || len(first.InputRequests) != 1 {
		t.Fatalf("%s: %v, %+v", tool, err, first)
	}
	routertest.WaitFor(t, "the unanswered call to end", func() bool { return h.Server.OpenCalls("everything") == 0 })
	_, err = retry(alice, tool, args, first, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "late"}})
	if err == nil || !strings.Contains(err.Error(), "no longer held") || !strings.Contains(err.Error(), "send the request again without it") {
		t.Errorf("a retry past the hold: %v", err)
	}
	// A retry that answers nothing under the request's id ends the call
	// (bob calls: alice's refused retry cooled her identical call down).
	bob := newEraSubject(t, url, "bob")
	if first, err = bob.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args}); err != nil || len(first.InputRequests) != 1 {
		t.Fatalf("%s: %v, %q", tool, err, routertest.Text(first))
	}
	_, err = bob.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args, RequestState: first.RequestState,
		InputResponses: mcp.InputResponseMap{"another-id": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "bob"}}}})
	if err == nil || !strings.Contains(err.Error(), "came without an answer") {
		t.Errorf("a retry without the answer: %v", err)
	}
	routertest.WaitFor(t, "the call without an answer to end", func() bool { return h.Server.OpenCalls("everything") == 0 })
	// Held when the router stops: Close waits for the call, which ends.
	carol := newEraSubject(t, url, "carol")
	if first, err = carol.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args}); err != nil || len(first.InputRequests) != 1 {
		t.Fatalf("%s: %v, %q", tool, err, routertest.Text(first))
	}
	if n := h.Server.OpenCalls("everything"); n != 1 {
		t.Fatalf("%d calls open while one is held", n)
	}
	_ = h.Server.Close()
	if n := h.Server.OpenCalls("everything"); n != 0 {
		t.Errorf("%d calls open after the router stopped", n)
	}
}

// A held call behind an approval: the approved retry answers the child's
// request of 2025-11-25 as input_required, its state wrapped in the
// approval's continuation, as a 2026-07-28 child's own; the retry with the
// answer completes the call once, and a replay of it runs nothing.
func TestHeldCallAfterAnApproval(t *testing.T) {
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"classic": routertest.Fixture(t, "-era", "2025-11-25")}})
	testutil.WriteFile(t, dir, "permissions.yml", "rules:\n  classic_elicit: require_approval\n")
	h := routertest.NewWithConfig(t, dir, cfg, map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	h.Server.StartChildren(&mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}})
	h.Booted()
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)
	cs := newEraSubject(t, ts.URL, "alice")
	args := map[string]any{"message": "your name?"}
	call := func(state string, responses mcp.InputResponseMap) (*mcp.CallToolResult, error) {
		return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "classic_elicit", Arguments: args, RequestState: state, InputResponses: responses})
	}
	approval, err := call("", nil)
	if err != nil || approval.InputRequests["evokore_approval"] == nil {
		t.Fatalf("the gated call did not ask for approval: %v %+v", err, approval)
	}
	asked, err := call(approval.RequestState, mcp.InputResponseMap{"evokore_approval": &mcp.ElicitResult{Action: "accept"}})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := asked.InputRequests["evokore-held"].(*mcp.ElicitParams); !ok || e.Message != "The 'classic' server asks: your name?" || !strings.HasPrefix(asked.RequestState, "evokore-approved.") {
		t.Fatalf("the approved call did not pass the child's question on: %s %+v %q", routertest.Text(asked), asked.InputRequests, asked.RequestState)
	}
	answer := mcp.InputResponseMap{"evokore-held": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "Lin"}}}
	if res, err := call(asked.RequestState, answer); err != nil || res.IsError || routertest.Text(res) != "accept: Lin" {
		t.Fatalf("the retry with the child's answer: %v %s", err, routertest.Text(res))
	}
	if res, err := call(asked.RequestState, answer); err == nil && !res.IsError {
		t.Errorf("a replayed retry ran: %s", routertest.Text(res))
	}
}
