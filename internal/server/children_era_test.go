package server_test

//lint:file-ignore SA1019 sampling, roots and logging pass through on purpose; see docs/decisions.md

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// answering is a client that answers every elicitation with its own
// answer and remembers the questions it was shown.
type answering struct {
	answer string
	mu     sync.Mutex
	asked  []string
}

func (a *answering) options(disableRoundTrips bool) *mcp.ClientOptions {
	o := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		a.mu.Lock()
		a.asked = append(a.asked, req.Params.Message)
		a.mu.Unlock()
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": a.answer}}, nil
	}}
	if disableRoundTrips {
		o.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	return o
}

func (a *answering) questions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asked...)
}

// newEraHarness is a router with two children that speak MCP 2026-07-28
// only (they refuse initialize): "solo" over stdio and "remote" over
// stateless streamable HTTP, a "classic" child of 2025-11-25 only and a
// child of both eras, "both". It serves streamable HTTP too.
func newEraHarness(t *testing.T) (*routertest.Harness, string) {
	t.Helper()
	addr := freeAddr(t)
	remote := exec.Command(testutil.FixtureServer(t), "-http", addr, "-era", "2026-07-28", "-name", "remote")
	if err := remote.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remote.Process.Kill(); _ = remote.Wait() })
	h := routertest.New(t, map[string]any{
		"solo":    routertest.Fixture(t, "-era", "2026-07-28", "-name", "solo"),
		"remote":  map[string]any{"transport": "http", "url": "http://" + addr + "/"},
		"classic": routertest.Fixture(t, "-era", "2025-11-25"),
		"both":    routertest.Fixture(t),
	}, map[string]string{"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "10000"})
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)
	return h, ts.URL
}

// connectNewEra connects a go-sdk client of MCP 2026-07-28 (its default)
// over streamable HTTP: it has no session with the router.
func connectNewEra(t *testing.T, url string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "new-era", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the new-era client negotiated %s", v)
	}
	return cs
}

// A child that speaks MCP 2026-07-28 only, over stdio and over stateless
// HTTP, is proxied for a client of either era: its tools are listed and
// called, and its input_required reaches the calling client, named, with
// the answer going back to the child with its own requestState.
func TestNewEraOnlyChildForBothEras(t *testing.T) {
	h, url := newEraHarness(t)
	oldA := &answering{answer: "Ada"}
	old := h.Connect(oldA.options(false))
	h.Booted()
	newA := &answering{answer: "Grace"}
	fresh := connectNewEra(t, url, newA.options(false))
	for _, id := range []string{"solo", "remote", "classic"} {
		routertest.WaitFor(t, id+" connected", func() bool { return routertest.StatusOf(t, old, id) == "connected" })
	}
	for _, id := range []string{"solo", "remote"} {
		for _, tc := range []struct {
			era string
			cs  *mcp.ClientSession
			a   *answering
		}{{"2025-11-25", old, oldA}, {"2026-07-28", fresh, newA}} {
			if got := routertest.Text(routertest.Call(t, tc.cs, id+"_echo", map[string]any{"message": tc.era})); got != "Echo: "+tc.era {
				t.Errorf("%s_echo from a %s client = %q", id, tc.era, got)
			}
			res := routertest.Call(t, tc.cs, id+"_ask", map[string]any{"message": "your name?"})
			want := "accept: " + tc.a.answer + " (state fixture-ask-state)"
			if res.IsError || routertest.Text(res) != want {
				t.Errorf("%s_ask from a %s client = %q, want %q", id, tc.era, routertest.Text(res), want)
			}
			q := tc.a.questions()
			if len(q) == 0 || q[len(q)-1] != "The '"+id+"' server asks: your name?" {
				t.Errorf("the %s client was asked %q", tc.era, q)
			}
		}
	}
	if got := routertest.Text(routertest.Call(t, fresh, "classic_echo", map[string]any{"message": "both"})); got != "Echo: both" {
		t.Errorf("classic_echo from the new-era client = %q", got)
	}
}

// The requestState a client of the new era gets with a child's
// input_required is evokore's seal over the child's own: it goes back to
// that child for that call only, and a forged, altered or moved one is
// refused before the child sees it.
func TestChildRequestStateIsSealedToTheCall(t *testing.T) {
	h, url := newEraHarness(t)
	cs := connectNewEra(t, url, (&answering{}).options(true))
	routertest.Call(t, cs, "classic_echo", map[string]any{"message": "start the children"})
	h.Booted()
	ask := func(args map[string]any, state string) (*mcp.CallToolResult, error) {
		p := &mcp.CallToolParams{Name: "solo_ask", Arguments: args}
		if state != "" {
			p.RequestState = state
			p.InputResponses = mcp.InputResponseMap{"answer": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "Lin"}}}
		}
		return cs.CallTool(context.Background(), p)
	}
	routertest.WaitFor(t, "solo connected", func() bool { return routertest.StatusOf(t, cs, "solo") == "connected" })
	// Each retry has arguments of its own: a refused one starts the
	// tool's cooldown for its arguments.
	begin := func(message string) (map[string]any, string) {
		args := map[string]any{"message": message}
		first, err := ask(args, "")
		if err != nil || !first.NeedsInput() {
			t.Fatalf("solo_ask answered %v, %v; want input_required", first, err)
		}
		if !strings.HasPrefix(first.RequestState, "evokore-child.") || strings.Contains(first.RequestState, "fixture-ask-state") {
			t.Fatalf("the child's own state reached the client: %q", first.RequestState)
		}
		if e, ok := first.InputRequests["answer"].(*mcp.ElicitParams); !ok || e.Message != "The 'solo' server asks: "+message {
			t.Errorf("input requests = %#v", first.InputRequests)
		}
		return args, first.RequestState
	}
	for what, retry := range map[string]func(args map[string]any, state string) (*mcp.CallToolResult, error){
		"forged": func(args map[string]any, state string) (*mcp.CallToolResult, error) {
			return ask(args, state[:len(state)-2]+"xx")
		},
		"altered": func(args map[string]any, state string) (*mcp.CallToolResult, error) {
			return ask(args, state+"-TAMPERED")
		},
		"moved": func(args map[string]any, state string) (*mcp.CallToolResult, error) {
			return ask(map[string]any{"message": "moved " + args["message"].(string)}, state)
		},
		"foreign": func(args map[string]any, _ string) (*mcp.CallToolResult, error) {
			return ask(args, "fixture-ask-state")
		},
	} {
		args, state := begin("name? " + what)
		res, err := retry(args, state)
		if err == nil || !strings.Contains(err.Error(), "requestState") {
			t.Errorf("a %s requestState: %q, %v; want it refused", what, routertest.Text(res), err)
		}
	}
	args, state := begin("name?")
	res, err := ask(args, state)
	if err != nil || res.IsError || routertest.Text(res) != "accept: Lin (state fixture-ask-state)" {
		t.Errorf("the retry with the state = %q, %v", routertest.Text(res), err)
	}
}

// Two clients call a child that asks for input at once: each is asked
// its own question only, and each answer reaches the child in the call it
// answers.
func TestChildInputReachesOnlyTheCaller(t *testing.T) {
	h, url := newEraHarness(t)
	a := &answering{answer: "from A"}
	b := &answering{answer: "from B"}
	ca := h.Connect(a.options(false))
	h.Booted()
	cb := connectNewEra(t, url, b.options(false))
	routertest.WaitFor(t, "solo connected", func() bool { return routertest.StatusOf(t, ca, "solo") == "connected" })
	for round := range 5 {
		var wg sync.WaitGroup
		got := make([]string, 2)
		for i, cs := range []*mcp.ClientSession{ca, cb} {
			wg.Go(func() {
				got[i] = routertest.Text(routertest.Call(t, cs, "solo_ask", map[string]any{"message": "question " + string(rune('A'+i))}))
			})
		}
		wg.Wait()
		if got[0] != "accept: from A (state fixture-ask-state)" || got[1] != "accept: from B (state fixture-ask-state)" {
			t.Fatalf("round %d: A got %q, B got %q", round, got[0], got[1])
		}
	}
	for name, c := range map[string]*answering{"A": a, "B": b} {
		for _, q := range c.questions() {
			if q != "The 'solo' server asks: question "+name {
				t.Errorf("client %s was shown %q", name, q)
			}
		}
		if len(c.questions()) != 5 {
			t.Errorf("client %s was asked %d times, want 5", name, len(c.questions()))
		}
	}
}

// A call from a client of the new era carries that client's capabilities
// to a child that speaks the new era (alone, or with the old one), per
// request: not those of the first client that connected.
func TestChildSeesTheCallersCapabilities(t *testing.T) {
	h, url := newEraHarness(t)
	first := h.Connect(&mcp.ClientOptions{CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "x"}, Model: "m", Role: "assistant"}, nil
	}})
	h.Booted()
	plain := connectNewEra(t, url, nil)
	asking := connectNewEra(t, url, (&answering{}).options(false))
	for _, id := range []string{"both", "solo"} {
		routertest.WaitFor(t, id+" connected", func() bool { return routertest.StatusOf(t, first, id) == "connected" })
		for _, tc := range []struct {
			who         string
			cs          *mcp.ClientSession
			elicitation bool
		}{{"plain", plain, false}, {"asking", asking, true}} {
			var caps map[string]any
			text := routertest.Text(routertest.Call(t, tc.cs, id+"_caps", nil))
			if err := json.Unmarshal([]byte(text), &caps); err != nil {
				t.Fatalf("%s_caps for %s = %q", id, tc.who, text)
			}
			if _, ok := caps["sampling"]; ok {
				t.Errorf("%s saw sampling for the %s client, which did not declare it: %s", id, tc.who, text)
			}
			if _, ok := caps["elicitation"]; ok != tc.elicitation {
				t.Errorf("%s saw elicitation %v for the %s client: %s", id, ok, tc.who, text)
			}
		}
	}
}

// A child whose server forgot the router's session (it expired, or the
// server restarted) gets a new session: every call keeps working while
// it is opened, and none is told the server died or is reconnecting.
func TestForgottenChildSessionIsOpenedAgain(t *testing.T) {
	addr := freeAddr(t)
	remote := exec.Command(testutil.FixtureServer(t), "-http", addr)
	if err := remote.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remote.Process.Kill(); _ = remote.Wait() })
	h := routertest.New(t, map[string]any{"remote": map[string]any{"transport": "http", "url": "http://" + addr + "/"}},
		map[string]string{"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "10000"})
	cs := h.Connect(nil)
	routertest.WaitFor(t, "remote connected", func() bool { return routertest.StatusOf(t, cs, "remote") == "connected" })
	call := func(name string) string {
		var args map[string]any
		if name == "remote_echo" {
			args = map[string]any{"message": "still here"}
		}
		res := routertest.Call(t, cs, name, args)
		if res.IsError {
			t.Fatalf("%s while the session was renewed: %q", name, routertest.Text(res))
		}
		return routertest.Text(res)
	}
	for range 2 {
		before := call("remote_session")
		if got := call("remote_forget"); got != "forgetting "+before {
			t.Fatalf("remote_forget = %q", got)
		}
		// The server answers the next request 404: the call goes out
		// again on a new session.
		if got := call("remote_echo"); got != "Echo: still here" {
			t.Fatalf("remote_echo = %q", got)
		}
		if after := call("remote_session"); after == before {
			t.Fatalf("still on session %s", before)
		}
	}
	if st := routertest.StatusOf(t, cs, "remote"); st != "connected" {
		t.Errorf("remote is %s", st)
	}
}

// A 2025-11-25 child's elicitation during a call from a sessionless
// caller (which takes no request of the router's) reaches that caller as
// input_required, named; the go-sdk client's retry with its answer goes
// back to the child's waiting request, and the call completes with it.
// No other client is asked.
func TestOldEraChildAsksASessionlessCallerByInputRequired(t *testing.T) {
	h, url := newEraHarness(t)
	bystander := &answering{answer: "not me"}
	old := h.Connect(bystander.options(false))
	h.Booted()
	caller := &answering{answer: "me"}
	fresh := connectNewEra(t, url, caller.options(false))
	routertest.WaitFor(t, "classic connected", func() bool { return routertest.StatusOf(t, old, "classic") == "connected" })
	got := routertest.Text(routertest.Call(t, fresh, "classic_elicit", map[string]any{"message": "deploy?"}))
	if got != "accept: me" {
		t.Errorf("classic_elicit from a sessionless caller = %q", got)
	}
	if q := caller.questions(); len(q) != 1 || q[0] != "The 'classic' server asks: deploy?" {
		t.Errorf("the caller was asked %q", q)
	}
	if q := bystander.questions(); len(q) != 0 {
		t.Errorf("another client was asked %q", q)
	}
}

// A child that speaks both eras (every go-sdk server), over stdio and
// over stateless streamable HTTP, serves each caller in its own era: a
// caller of 2026-07-28 gets the child's own input_required, named and
// sealed, and its retry runs the tool once, on a second connection of
// that era (a second process for a stdio child, started on that first
// call and stopped with the router); a caller of 2025-11-25 on the same
// router is still asked by the child's own elicitation request, on the
// first connection. A child of 2025-11-25 alone gets no second process.
func TestDualEraChildServesEachCallerItsEra(t *testing.T) {
	addr := freeAddr(t)
	web := exec.Command(testutil.FixtureServer(t), "-http", addr, "-stateless", "-name", "web")
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = web.Process.Kill(); _ = web.Wait() })
	h := routertest.New(t, map[string]any{
		"dual":    routertest.Fixture(t, "-name", "dual"),
		"web":     map[string]any{"transport": "http", "url": "http://" + addr + "/"},
		"classic": routertest.Fixture(t, "-era", "2025-11-25"),
	}, map[string]string{"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "10000"})
	old, oldA, fresh, newA := callersOfBothEras(t, h)
	for _, id := range []string{"dual", "web", "classic"} {
		routertest.WaitFor(t, id+" connected", func() bool { return routertest.StatusOf(t, old, id) == "connected" })
	}
	pid := func(cs *mcp.ClientSession, id string) int {
		n, err := strconv.Atoi(routertest.Text(routertest.Call(t, cs, id+"_pid", nil)))
		if err != nil {
			t.Fatalf("%s_pid: %v", id, err)
		}
		return n
	}
	first := pid(old, "dual")

	for _, id := range []string{"dual", "web"} {
		args := map[string]any{"message": "your name, " + id + "?"}
		res, err := fresh.CallTool(context.Background(), &mcp.CallToolParams{Name: id + "_ask", Arguments: args})
		if err != nil || !res.NeedsInput() {
			t.Fatalf("%s_ask from a 2026-07-28 caller = %#v, %v; want input_required", id, res, err)
		}
		if e, ok := res.InputRequests["answer"].(*mcp.ElicitParams); !ok || e.Message != "The '"+id+"' server asks: your name, "+id+"?" {
			t.Errorf("%s's input requests = %#v", id, res.InputRequests)
		}
		if !strings.HasPrefix(res.RequestState, "evokore-child.") || strings.Contains(res.RequestState, "fixture-ask-state") {
			t.Errorf("%s's requestState reached the caller unsealed: %q", id, res.RequestState)
		}
		retry, err := fresh.CallTool(context.Background(), &mcp.CallToolParams{Name: id + "_ask", Arguments: args, RequestState: res.RequestState,
			InputResponses: mcp.InputResponseMap{"answer": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "Lin"}}}})
		if err != nil || retry.IsError || routertest.Text(retry) != "accept: Lin (state fixture-ask-state)" {
			t.Errorf("%s_ask's retry = %q, %v", id, routertest.Text(retry), err)
		}
		if got := routertest.Text(routertest.Call(t, fresh, id+"_answers", nil)); got != "answers: 1" {
			t.Errorf("%s ran the answered ask %q", id, got)
		}
	}
	if len(newA.questions()) != 0 {
		t.Errorf("the 2026-07-28 caller was sent elicitation requests: %q", newA.questions())
	}
	second := pid(fresh, "dual")
	if second == first {
		t.Errorf("the 2026-07-28 caller was served by the first process (%d)", first)
	}

	// The caller of 2025-11-25 is asked by the child itself, on the first
	// connection, which the retry above never reached.
	if got := routertest.Text(routertest.Call(t, old, "dual_ask", map[string]any{"message": "and yours?"})); got != "accept: Ada (state fixture-ask-state)" {
		t.Errorf("dual_ask from a 2025-11-25 caller = %q", got)
	}
	if got := routertest.Text(routertest.Call(t, old, "dual_elicit", map[string]any{"message": "deploy?"})); got != "accept: Ada" {
		t.Errorf("dual_elicit from a 2025-11-25 caller = %q", got)
	}
	if q := oldA.questions(); len(q) != 2 || q[0] != "The 'dual' server asks: and yours?" || q[1] != "The 'dual' server asks: deploy?" {
		t.Errorf("the 2025-11-25 caller was asked %q", q)
	}
	if got := routertest.Text(routertest.Call(t, old, "dual_answers", nil)); got != "answers: 1" {
		t.Errorf("the first process ran %q", got)
	}
	if pid(old, "dual") != first || pid(fresh, "dual") != second {
		t.Errorf("the processes changed")
	}
	if a, b := pid(old, "classic"), pid(fresh, "classic"); a != b {
		t.Errorf("a child of 2025-11-25 alone was started twice: %d, %d", a, b)
	}
	_ = h.Server.Close()
	routertest.WaitGone(t, 10*time.Second, first, second)
}

// A child's prompt that asks for input by input_required reaches each
// caller its era's way: a caller of 2026-07-28 gets the input_required,
// named and sealed to that prompt and its arguments, and its retry renders
// the prompt; a caller of 2025-11-25 is asked over its session, by a
// child of both eras itself and by the router for a child of the new era
// alone.
func TestChildPromptAsksEachCallerItsWay(t *testing.T) {
	h := routertest.New(t, map[string]any{
		"dual": routertest.Fixture(t, "-name", "dual", "-ask-prompt"),
		"solo": routertest.Fixture(t, "-name", "solo", "-era", "2026-07-28", "-ask-prompt"),
	}, map[string]string{"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "10000"})
	old, oldA, fresh, _ := callersOfBothEras(t, h)
	ctx := context.Background()
	text := func(res *mcp.GetPromptResult) string {
		if res == nil || len(res.Messages) != 1 {
			return fmt.Sprintf("%#v", res)
		}
		tc, _ := res.Messages[0].Content.(*mcp.TextContent)
		if tc == nil {
			return "(no text)"
		}
		return tc.Text
	}
	for _, id := range []string{"dual", "solo"} {
		routertest.WaitFor(t, id+" connected", func() bool { return routertest.StatusOf(t, old, id) == "connected" })
		args := map[string]string{"topic": "colour of " + id}
		first, err := fresh.GetPrompt(ctx, &mcp.GetPromptParams{Name: id + "_ask", Arguments: args})
		if err != nil || first.InputRequests == nil {
			t.Fatalf("%s_ask from a 2026-07-28 caller = %#v, %v; want input_required", id, first, err)
		}
		if e, ok := first.InputRequests["answer"].(*mcp.ElicitParams); !ok || e.Message != "The '"+id+"' server asks: colour of "+id+"?" {
			t.Errorf("%s's input requests = %#v", id, first.InputRequests)
		}
		if !strings.HasPrefix(first.RequestState, "evokore-child.") {
			t.Errorf("%s's requestState = %q", id, first.RequestState)
		}
		answer := mcp.InputResponseMap{"answer": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "Lin"}}}
		if _, err := fresh.GetPrompt(ctx, &mcp.GetPromptParams{Name: id + "_ask", Arguments: map[string]string{"topic": "another"}, RequestState: first.RequestState, InputResponses: answer}); err == nil || !strings.Contains(err.Error(), "requestState") {
			t.Errorf("%s's state sent with other arguments: %v; want it refused", id, err)
		}
		res, err := fresh.GetPrompt(ctx, &mcp.GetPromptParams{Name: id + "_ask", Arguments: args, RequestState: first.RequestState, InputResponses: answer})
		if err != nil || text(res) != "colour of "+id+": Lin (state fixture-ask-state)" {
			t.Errorf("%s_ask's retry = %q, %v", id, text(res), err)
		}
		res, err = old.GetPrompt(ctx, &mcp.GetPromptParams{Name: id + "_ask", Arguments: args})
		if err != nil || text(res) != "colour of "+id+": Ada (state fixture-ask-state)" {
			t.Errorf("%s_ask from a 2025-11-25 caller = %q, %v", id, text(res), err)
		}
	}
	if q := oldA.questions(); len(q) != 2 || q[0] != "The 'dual' server asks: colour of dual?" || q[1] != "The 'solo' server asks: colour of solo?" {
		t.Errorf("the 2025-11-25 caller was asked %q", q)
	}
}

// callersOfBothEras connects to h a 2025-11-25 client (in memory) that
// answers the child's questions "Ada", and a 2026-07-28 client over HTTP;
// each comes with what it was asked.
func callersOfBothEras(t *testing.T, h *routertest.Harness) (old *mcp.ClientSession, oldA *answering, fresh *mcp.ClientSession, newA *answering) {
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)
	oldA = &answering{answer: "Ada"}
	old = h.Connect(oldA.options(false))
	h.Booted()
	newA = &answering{}
	return old, oldA, connectNewEra(t, ts.URL, newA.options(true)), newA
}
