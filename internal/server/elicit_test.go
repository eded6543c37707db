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
			if strings.Contains(message, "sk-live-123") || !strings.Contains(message, `api_key="[redacted]"`) {
				t.Errorf("the question shows a secret argument: %q", message)
			}
			if ran := strings.Contains(routertest.Text(res), "sk-live-123"); ran != tc.runs {
				t.Errorf("the child ran: %v, want %v (%q)", ran, tc.runs, routertest.Text(res))
			}
		})
	}
}
