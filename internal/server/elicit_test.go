package server_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// With a client that declared elicitation, a gated call asks the user
// through the client: accept runs it once, decline and cancel refuse it,
// and no token or id the model could use appears anywhere.
func TestApprovalByElicitation(t *testing.T) {
	for _, tc := range []struct {
		action string
		runs   bool
		text   string
	}{
		{"accept", true, ""},
		{"decline", false, "The user declined to run 'fx_args'"},
		{"cancel", false, "The user dismissed the approval of 'fx_args'"},
	} {
		t.Run(tc.action, func(t *testing.T) {
			h := secured(t, approveEverything, nil, map[string]string{"EVOKORE_APPROVALS_MODE": ""}, nil)
			var asked atomic.Int32
			var message string
			cs := h.Connect(&mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Add(1)
				message = req.Params.Message
				return &mcp.ElicitResult{Action: tc.action}, nil
			}})
			h.Booted()
			res := routertest.Call(t, cs, "fx_args", map[string]any{"api_key": "sk-live-123"})
			if tc.runs == res.IsError {
				t.Fatalf("fx_args after %s: %q", tc.action, routertest.Text(res))
			}
			if !tc.runs && !strings.HasPrefix(routertest.Text(res), tc.text) {
				t.Errorf("refusal = %q", routertest.Text(res))
			}
			if asked.Load() != 1 || !strings.Contains(message, "'fx_args' on the 'fx' server") {
				t.Errorf("asked %d times: %q", asked.Load(), message)
			}
			if strings.Contains(message, "sk-live-123") || !strings.Contains(message, `"api_key": "[redacted]"`) {
				t.Errorf("the question shows a secret argument: %q", message)
			}
			if ran := strings.Contains(routertest.Text(res), "sk-live-123"); ran != tc.runs {
				t.Errorf("the child ran: %v, want %v (%q)", ran, tc.runs, routertest.Text(res))
			}
		})
	}
}

// The user is asked about the call that would run, all of it: an
// argument after a long one is shown, a cut value says it was cut, a
// secret nested in an object is redacted, and a name or value made of
// terminal controls is shown escaped.
func TestElicitationShowsEveryArgument(t *testing.T) {
	h := secured(t, approveEverything, nil, map[string]string{"EVOKORE_APPROVALS_MODE": ""}, nil)
	var message string
	cs := h.Connect(&mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		message = req.Params.Message
		return &mcp.ElicitResult{Action: "decline"}, nil
	}})
	h.Booted()
	routertest.Call(t, cs, "fx_args", map[string]any{
		"a_note":       strings.Repeat("harmless ", 400),
		"path":         "/etc/shadow",
		"\x1b[2Jclear": "\u202egnp.exe\u009b31m",
		"config":       map[string]any{"api_key": "sk-live-123", "depth": 3},
	})
	for _, want := range []string{`"path": "/etc/shadow"`, "more characters not shown", `"\u001b[2Jclear": "\u202egnp.exe\u009b31m"`, `"config": {"api_key":"[redacted]","depth":3}`} {
		if !strings.Contains(message, want) {
			t.Errorf("the question lacks %s:\n%s", want, message)
		}
	}
	if strings.ContainsAny(message, "\x1b\u202e\u009b") || strings.Contains(message, "sk-live-123") {
		t.Errorf("the question carries a terminal control or a secret:\n%q", message)
	}
}
