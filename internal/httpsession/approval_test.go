package httpsession_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A sessionless client (MCP 2026-07-28) is asked for an approval in the
// call's answer: input_required with an elicitation naming the server,
// and a requestState bound to the call. The retry with the user's accept
// runs the call once; a decline refuses it and spends the state (sent
// again with accept it runs nothing); a forged state, a state moved
// to other arguments and a replayed one are refused; the child counts
// exactly the one approved run.
func TestApprovalByInputRequired(t *testing.T) {
	ts := approvalServer(t, "fx_fail")
	connect := func(opts *mcp.ClientOptions) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "mrtr", Version: "1"}, opts)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	var asked string
	answer := "accept"
	elicit := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = req.Params.Message
		return &mcp.ElicitResult{Action: answer}, nil
	}
	manual := connect(&mcp.ClientOptions{ElicitationHandler: elicit, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	count := func() string { return routertest.Text(routertest.Call(t, manual, "fx_read_count", map[string]any{})) }
	call := func(args map[string]any, state string, responses mcp.InputResponseMap) *mcp.CallToolResult {
		t.Helper()
		res, err := manual.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx_fail", Arguments: args, RequestState: state, InputResponses: responses})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	accept := mcp.InputResponseMap{"evokore_approval": &mcp.ElicitResult{Action: "accept"}}

	first := call(map[string]any{"message": "a"}, "", nil)
	if !first.NeedsInput() || first.RequestState == "" {
		t.Fatalf("a gated call did not ask for input: %s", routertest.Text(first))
	}
	p, _ := first.InputRequests["evokore_approval"].(*mcp.ElicitParams)
	if p == nil || !strings.Contains(p.Message, "'fx_fail' on the 'fx' server") {
		t.Fatalf("the elicitation does not name the tool and its server: %+v", first.InputRequests)
	}
	state := first.RequestState
	for name, forged := range map[string]string{"forged": state[:len(state)-2] + "00", "empty-mac": state[:32]} {
		if res := call(map[string]any{"message": "a"}, forged, accept); !res.IsError || !strings.Contains(routertest.Text(res), "does not match") {
			t.Errorf("a %s state: %s", name, routertest.Text(res))
		}
	}
	if res := call(map[string]any{"message": "b"}, state, accept); !res.IsError || !strings.Contains(routertest.Text(res), "does not match") {
		t.Errorf("a state moved to other arguments: %s", routertest.Text(res))
	}
	if res := call(map[string]any{"message": "a"}, state, accept); routertest.Text(res) != "failed: a" {
		t.Fatalf("the approved retry: %s", routertest.Text(res))
	}
	if res := call(map[string]any{"message": "a"}, state, accept); !strings.Contains(routertest.Text(res), "does not match") {
		t.Errorf("a replayed state: %s", routertest.Text(res))
	}
	declined := call(map[string]any{"message": "c"}, "", nil)
	if res := call(map[string]any{"message": "c"}, declined.RequestState, mcp.InputResponseMap{"evokore_approval": &mcp.ElicitResult{Action: "decline"}}); !strings.Contains(routertest.Text(res), "declined") {
		t.Errorf("a declined approval: %s", routertest.Text(res))
	}
	// The declined state is spent: sent again with accept, it runs nothing.
	if res := call(map[string]any{"message": "c"}, declined.RequestState, accept); !res.IsError || routertest.Text(res) == "failed: c" {
		t.Errorf("a declined state sent again with accept: %s", routertest.Text(res))
	}
	if got := count(); got != "calls: 1" {
		t.Errorf("the child counted %s, want the one approved run", got)
	}

	// The go-sdk client answers input_required itself, asking its user.
	auto := connect(&mcp.ClientOptions{ElicitationHandler: elicit})
	if res := routertest.Call(t, auto, "fx_fail", map[string]any{"message": "d"}); routertest.Text(res) != "failed: d" || !strings.Contains(asked, "fx_fail") {
		t.Errorf("through the client's own round trip: %s (asked %q)", routertest.Text(res), asked)
	}
	answer = "decline"
	if res := routertest.Call(t, auto, "fx_fail", map[string]any{"message": "e"}); !strings.Contains(routertest.Text(res), "declined") {
		t.Errorf("declined through the client: %s", routertest.Text(res))
	}
	if got := count(); got != "calls: 2" {
		t.Errorf("the child counted %s, want 2", got)
	}
}

// A call that needs approval and whose child then asks for input: the
// approved retry answers the child's input_required, its state wrapped in
// a continuation; the retry with the child's answer runs the tool once
// more without asking again, and a replay of it runs nothing, nor does
// its token with another run's child state.
func TestApprovedCallWhoseChildAsksForInput(t *testing.T) {
	ts := approvalServer(t, "fx_ask")
	c := mcp.NewClient(&mcp.Implementation{Name: "mrtr", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	args := map[string]any{"message": "your name?"}
	call := func(state string, responses mcp.InputResponseMap) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx_ask", Arguments: args, RequestState: state, InputResponses: responses})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	approval := call("", nil)
	if _, ok := approval.InputRequests["evokore_approval"]; !ok {
		t.Fatalf("the gated call did not ask for approval: %+v", approval)
	}
	asked := call(approval.RequestState, mcp.InputResponseMap{"evokore_approval": &mcp.ElicitResult{Action: "accept"}})
	if e, ok := asked.InputRequests["answer"].(*mcp.ElicitParams); !ok || e.Message != "The 'fx' server asks: your name?" {
		t.Fatalf("the approved call did not pass the child's question on: %s %+v", routertest.Text(asked), asked.InputRequests)
	}
	answer := mcp.InputResponseMap{"answer": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "Lin"}}}
	// A continuation is bound to the child's state it came with: another
	// approved run of the same call gets a child state of its own, and
	// the first continuation's token carrying that state runs nothing.
	again := call(call("", nil).RequestState, mcp.InputResponseMap{"evokore_approval": &mcp.ElicitResult{Action: "accept"}})
	token, _, ok1 := strings.Cut(strings.TrimPrefix(asked.RequestState, "evokore-approved."), ".")
	_, childState, ok2 := strings.Cut(strings.TrimPrefix(again.RequestState, "evokore-approved."), ".")
	if !ok1 || !ok2 || again.RequestState == asked.RequestState {
		t.Fatalf("continuations %q and %q", asked.RequestState, again.RequestState)
	}
	if res := call("evokore-approved."+token+"."+childState, answer); !res.IsError {
		t.Errorf("a continuation carrying another run's child state ran: %s", routertest.Text(res))
	}
	if res := call(asked.RequestState, answer); res.IsError || routertest.Text(res) != "accept: Lin (state fixture-ask-state)" {
		t.Errorf("the retry with the child's answer: %s", routertest.Text(res))
	}
	if res := call(asked.RequestState, answer); !res.IsError {
		t.Errorf("a replayed continuation ran: %s", routertest.Text(res))
	}
	if got := routertest.Text(routertest.Call(t, cs, "fx_answers", map[string]any{})); got != "answers: 1" {
		t.Errorf("the child ran the answered call: %s", got)
	}
}

// approvalServer serves over HTTP a router whose fixture child's tool
// needs approval.
func approvalServer(t *testing.T, tool string) *httptest.Server {
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"fx": routertest.Fixture(t)}})
	testutil.WriteFile(t, dir, "permissions.yml", "rules:\n  "+tool+": require_approval\n")
	h := routertest.NewWithConfig(t, dir, cfg, map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	h.Server.StartChildren(nil)
	h.Booted()
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)
	return ts
}
