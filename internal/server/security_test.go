package server_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// clock is a test clock the router's policy reads.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Unix(1_800_000_000, 0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// secured is a router over a fixture child with the given permissions.yml
// (empty: the shipped permissions) and extra server config. Unless env
// says otherwise it approves in token mode, EVOKORE-MCP's flow, which the
// token tests exercise; the out-of-band modes have tests of their own.
func secured(t *testing.T, permissions string, server map[string]any, env map[string]string, clk *clock) *routertest.Harness {
	t.Helper()
	if _, ok := env["EVOKORE_APPROVALS_MODE"]; !ok {
		env = maps.Clone(env)
		if env == nil {
			env = map[string]string{}
		}
		env["EVOKORE_APPROVALS_MODE"] = "token"
	}
	dir := t.TempDir()
	fx := routertest.Fixture(t)
	for k, v := range server {
		fx[k] = v
	}
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"fx": fx}})
	if permissions != "" {
		testutil.WriteFile(t, dir, "permissions.yml", permissions)
	}
	var now func() time.Time
	if clk != nil {
		now = clk.Now
	}
	h := routertest.NewWithOptions(t, dir, cfg, env, now)
	return h
}

const approveEverything = `
rules:
  fx_count: require_approval
  fx_args: require_approval
  fx_echo: require_approval
  reload_plugins: require_approval
`

func rpcError(t *testing.T, cs *mcp.ClientSession, name string, args any) *jsonrpc.Error {
	t.Helper()
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("%s: want a JSON-RPC error, got %v", name, err)
	}
	return we
}

func TestRolesOverShippedAndCustomPermissions(t *testing.T) {
	for _, tc := range []struct {
		name, perms string
		env         map[string]string
		tool        string
		want        string // "allow", "approval" or "deny"
	}{
		{"no role, shipped rule", "", nil, "execute_skill", "approval"},
		{"no role, no rule", "", nil, "fx_echo", "allow"},
		{"no role, default deny", "", map[string]string{"EVOKORE_SECURITY_DEFAULT_DENY": "true"}, "fx_echo", "deny"},
		{"admin", "", map[string]string{"EVOKORE_ROLE": "admin"}, "fx_echo", "allow"},
		{"developer, read-only native", "", map[string]string{"EVOKORE_ROLE": "developer"}, "describe_tool", "allow"},
		{"developer, other tool", "", map[string]string{"EVOKORE_ROLE": "developer"}, "fx_echo", "approval"},
		{"readonly, other tool", "", map[string]string{"EVOKORE_ROLE": "readonly"}, "fx_echo", "deny"},
		{"readonly, read-only native", "", map[string]string{"EVOKORE_ROLE": "readonly"}, "proxy_server_status", "allow"},
		{"custom role override", "roles:\n  ops:\n    default_permission: deny\n    overrides:\n      fx_echo: allow\nactive_role: ops\n", nil, "fx_echo", "allow"},
		{"custom role default", "roles:\n  ops:\n    default_permission: deny\n    overrides:\n      fx_echo: allow\nactive_role: ops\n", nil, "fx_slow", "deny"},
		{"a flat deny holds under a role", "roles:\n  ops:\n    default_permission: allow\nactive_role: ops\nrules:\n  fx_echo: deny\n", nil, "fx_echo", "deny"},
		{"a flat allow does not loosen a role", "roles:\n  ops:\n    default_permission: deny\nactive_role: ops\nrules:\n  fx_echo: allow\n", nil, "fx_echo", "deny"},
		{"flat rule deny", "rules:\n  fx_echo: deny\n", nil, "fx_echo", "deny"},
		{"EVOKORE_ROLE beats active_role", "roles:\n  a:\n    default_permission: deny\n  b:\n    default_permission: allow\nactive_role: a\n", map[string]string{"EVOKORE_ROLE": "b"}, "fx_echo", "allow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := secured(t, tc.perms, nil, tc.env, nil)
			cs := h.Connect(nil)
			h.Booted()
			args := map[string]map[string]any{
				"fx_echo": {"message": "m"}, "fx_slow": {"ms": 1}, "describe_tool": {"tools": []string{"fx_echo"}},
				"execute_skill": {"skill_name": "x"}, "proxy_server_status": {},
			}[tc.tool]
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: args})
			// Every outcome is classified on its own evidence: anything
			// else (an error result, another refusal) fails the test
			// instead of counting as allowed.
			var got string
			var we *jsonrpc.Error
			switch {
			case errors.As(err, &we) && we.Code == -32600 && we.Message == policy.DeniedText(tc.tool):
				got = "deny"
			case err != nil:
				t.Fatalf("call: %v", err)
			case res.IsError && strings.HasPrefix(routertest.Text(res), "[EVOKORE-MCP SECURITY INTERCEPTOR]"):
				got = "approval"
			case !res.IsError:
				got = "allow"
			default:
				t.Fatalf("%s: neither allowed, denied nor intercepted: %s", tc.tool, routertest.Text(res))
			}
			if got != tc.want {
				t.Errorf("%s: got %s, want %s (%s)", tc.tool, got, tc.want, routertest.Text(res))
			}
		})
	}
}

func TestApprovalTokenLifecycle(t *testing.T) {
	clk := newClock()
	h := secured(t, approveEverything, nil, nil, clk)
	a := h.Connect(nil)
	b := h.Connect(nil)
	h.Booted()
	args := map[string]any{"message": "approved"}

	token := routertest.ApprovalToken(t, routertest.Call(t, a, "fx_echo", args))
	withToken := map[string]any{"message": "approved", "_evokore_approval_token": token}

	// Another session cannot use it, nor can other arguments.
	routertest.ApprovalToken(t, routertest.Call(t, b, "fx_echo", withToken))
	routertest.ApprovalToken(t, routertest.Call(t, a, "fx_echo", map[string]any{"message": "changed", "_evokore_approval_token": token}))
	// A forged or mutated token is intercepted again.
	mutated := []byte(token)
	mutated[len(mutated)-1] ^= 1
	if mutated[len(mutated)-1] > 'f' || (mutated[len(mutated)-1] > '9' && mutated[len(mutated)-1] < 'a') {
		mutated[len(mutated)-1] = '0'
	}
	routertest.ApprovalToken(t, routertest.Call(t, a, "fx_echo", map[string]any{"message": "approved", "_evokore_approval_token": string(mutated)}))
	routertest.ApprovalToken(t, routertest.Call(t, a, "fx_echo", map[string]any{"message": "approved", "_evokore_approval_token": strings.Repeat("ab", 24)}))

	// The right session and arguments run it, once.
	res := routertest.Call(t, a, "fx_echo", withToken)
	if res.IsError || routertest.Text(res) != "Echo: approved" {
		t.Fatalf("approved call: %s", routertest.Text(res))
	}
	routertest.ApprovalToken(t, routertest.Call(t, a, "fx_echo", withToken)) // replay

	// Expiry.
	token = routertest.ApprovalToken(t, routertest.Call(t, a, "fx_echo", args))
	clk.Advance(5*time.Minute + time.Second)
	routertest.ApprovalToken(t, routertest.Call(t, a, "fx_echo", map[string]any{"message": "approved", "_evokore_approval_token": token}))
}

func TestApprovalTokenNeverReachesTheChild(t *testing.T) {
	h := secured(t, approveEverything, nil, nil, nil)
	cs := h.Connect(nil)
	h.Booted()
	args := map[string]any{"z": 1, "a": "b"}
	token := routertest.ApprovalToken(t, routertest.Call(t, cs, "fx_args", args))
	// Key order does not matter: the token binds canonical arguments.
	res := routertest.Call(t, cs, "fx_args", map[string]any{"_evokore_approval_token": token, "a": "b", "z": 1})
	if res.IsError || strings.Contains(routertest.Text(res), "_evokore_approval_token") || !strings.Contains(routertest.Text(res), `"z":1`) {
		t.Errorf("the child saw %s", routertest.Text(res))
	}
	// Even on a tool that needs no approval.
	res = routertest.Call(t, cs, "fx_slow", map[string]any{"ms": 1, "_evokore_approval_token": "anything"})
	if res.IsError {
		t.Errorf("fx_slow: %s", routertest.Text(res))
	}
}

func TestConcurrentRetriesRunOnce(t *testing.T) {
	h := secured(t, approveEverything, nil, nil, nil)
	cs := h.Connect(nil)
	h.Booted()
	token := routertest.ApprovalToken(t, routertest.Call(t, cs, "fx_count", map[string]any{}))
	// A retry that redeems the token after another consumed it is
	// intercepted again; one that redeemed it before is told the
	// approval was used. Which of the two a refused retry gets is down
	// to timing; that exactly one runs is not.
	var ran, refused atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := routertest.Call(t, cs, "fx_count", map[string]any{"_evokore_approval_token": token})
			switch text := routertest.Text(res); {
			case !res.IsError && strings.HasPrefix(text, "calls: "):
				ran.Add(1)
			case res.IsError && (strings.HasPrefix(text, "[EVOKORE-MCP SECURITY INTERCEPTOR]") || text == policy.UsedApprovalText("fx_count")):
				refused.Add(1)
			default:
				t.Errorf("a retry answered isError=%v %q", res.IsError, text)
			}
		}()
	}
	wg.Wait()
	if ran.Load() != 1 || refused.Load() != 19 {
		t.Errorf("ran %d, refused %d", ran.Load(), refused.Load())
	}
	if got := routertest.Text(routertest.Call(t, cs, "fx_read_count", map[string]any{})); got != "calls: 1" {
		t.Errorf("the child counted %q", got)
	}
}

func TestDeniedApprovalNeverRuns(t *testing.T) {
	h := secured(t, approveEverything, nil, nil, nil)
	cs := h.Connect(nil)
	h.Booted()
	token := routertest.ApprovalToken(t, routertest.Call(t, cs, "fx_count", map[string]any{}))
	home := h.Dir + "/home"
	pending, err := policy.ListPending(home, time.Now())
	if err != nil || len(pending) != 1 || pending[0].ToolName != "fx_count" || pending[0].Token != token[:8]+"..." {
		t.Fatalf("pending approvals: %+v %v", pending, err)
	}
	if err := policy.DenyApproval(home, pending[0].ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	res := routertest.Call(t, cs, "fx_count", map[string]any{"_evokore_approval_token": token})
	if !res.IsError || routertest.Text(res) != policy.DeniedApprovalText("fx_count", pending[0].ID) {
		t.Errorf("a denied approval's retry = %q", routertest.Text(res))
	}
	if got := routertest.Text(routertest.Call(t, cs, "fx_read_count", map[string]any{})); got != "calls: 0" {
		t.Errorf("a denied approval ran: %q", got)
	}
}

func TestNativeToolsFollowTheApprovalFlow(t *testing.T) {
	h := secured(t, "rules:\n  describe_tool: require_approval\n", nil, nil, nil)
	cs := h.Connect(nil)
	args := map[string]any{"tools": []string{"describe_tool"}}
	token := routertest.ApprovalToken(t, routertest.Call(t, cs, "describe_tool", args))
	args["_evokore_approval_token"] = token
	if res := routertest.Call(t, cs, "describe_tool", args); res.IsError || !strings.Contains(routertest.Text(res), `"schemas"`) {
		t.Errorf("approved native call: %s", routertest.Text(res))
	}
}

func TestPinnedToolQuarantinedUntilAccepted(t *testing.T) {
	h := secured(t, "", nil, map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"}, nil)
	changed := make(chan struct{}, 16)
	cs := h.Connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	h.Booted()
	routertest.Call(t, cs, "fx_mutate", map[string]any{"description": "Now also uploads your files."})
	routertest.WaitFor(t, "fx_echo to leave the listing", func() bool {
		for _, n := range routertest.ToolNames(t, cs) {
			if n == "fx_echo" {
				return false
			}
		}
		return true
	})
	we := rpcError(t, cs, "fx_echo", map[string]any{"message": "x"})
	// The model learns what changed and what to do, never the new text.
	if we.Code != -32600 || !strings.Contains(we.Message, "quarantined: its description changed") || strings.Contains(we.Message, "uploads") || !strings.Contains(we.Message, "evokore pins accept fx/echo") {
		t.Fatalf("quarantine error: %d %s", we.Code, we.Message)
	}
	// An operator accepts it from another process.
	pins, err := policy.OpenPins(h.Dir+"/home", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := pins.Accept("fx", "echo"); err != nil || len(got) != 1 {
		t.Fatalf("accept: %v %v", got, err)
	}
	routertest.WaitFor(t, "fx_echo to return", func() bool {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx_echo", Arguments: map[string]any{"message": "back"}})
		return err == nil && routertest.Text(res) == "Echo: back"
	})
}

func TestPinningOffPerServer(t *testing.T) {
	h := secured(t, "", map[string]any{"pinning": false}, nil, nil)
	cs := h.Connect(nil)
	h.Booted()
	routertest.Call(t, cs, "fx_mutate", map[string]any{"description": "changed"})
	// The router has re-listed the child once describe_tool shows the
	// new description.
	routertest.WaitFor(t, "the changed definition to be listed", func() bool {
		return strings.Contains(routertest.Text(routertest.Call(t, cs, "describe_tool", map[string]any{"tools": []string{"fx_echo"}})), "changed")
	})
	if res := routertest.Call(t, cs, "fx_echo", map[string]any{"message": "ok"}); res.IsError {
		t.Errorf("an unpinned server's changed tool still runs: %s", routertest.Text(res))
	}
}

// A server whose limitScope is "global" has one bucket for all its
// callers, which protects the child from their sum.
func TestGlobalRateLimitSharedBySessions(t *testing.T) {
	clk := newClock()
	h := secured(t, "", map[string]any{"limitScope": "global", "rateLimit": map[string]any{"maxTokens": 3, "refillRate": 1, "refillIntervalMs": 1000, "toolLimits": map[string]any{"slow": 2}}}, nil, clk)
	a := h.Connect(nil)
	b := h.Connect(nil)
	h.Booted()
	echo := map[string]any{"message": "m"}
	routertest.Call(t, a, "fx_echo", echo)
	routertest.Call(t, b, "fx_echo", echo)
	routertest.Call(t, a, "fx_echo", echo)
	we := rpcError(t, b, "fx_echo", echo) // the server bucket is shared: 3 spent
	if we.Code != -32600 || we.Message != "Rate limit exceeded for server 'fx'. Retry after 1s." {
		t.Errorf("server limit: %d %q", we.Code, we.Message)
	}
	clk.Advance(time.Second)
	if res := routertest.Call(t, b, "fx_echo", echo); res.IsError {
		t.Errorf("after a refill: %s", routertest.Text(res))
	}

	// The per-tool bucket (2 per minute) rejects first, and its rejection
	// costs the server bucket nothing.
	clk.Advance(10 * time.Second)
	routertest.Call(t, a, "fx_slow", map[string]any{"ms": 1})
	routertest.Call(t, a, "fx_slow", map[string]any{"ms": 2})
	we = rpcError(t, a, "fx_slow", map[string]any{"ms": 3})
	if we.Message != "Rate limit exceeded for fx/slow. Retry after 30s." {
		t.Errorf("tool limit: %q", we.Message)
	}
	if res := routertest.Call(t, a, "fx_echo", echo); res.IsError {
		t.Errorf("the server bucket still has a token: %s", routertest.Text(res))
	}
}

func TestCooldownAfterFailureOnly(t *testing.T) {
	clk := newClock()
	h := secured(t, "", nil, nil, clk)
	cs := h.Connect(nil)
	h.Booted()
	fail := map[string]any{"message": "boom"}
	if res := routertest.Call(t, cs, "fx_fail", fail); !res.IsError || routertest.Text(res) != "failed: boom" {
		t.Fatalf("first failure reaches the child: %s", routertest.Text(res))
	}
	res := routertest.Call(t, cs, "fx_fail", map[string]any{"message": "boom"})
	if want := "[EVOKORE COOLDOWN] Tool 'fx_fail' is currently on cooldown to prevent infinite loops. Please wait 10 seconds or try a different approach."; routertest.Text(res) != want {
		t.Errorf("cooling: %q", routertest.Text(res))
	}
	if res := routertest.Call(t, cs, "fx_fail", map[string]any{"message": "other"}); routertest.Text(res) != "failed: other" {
		t.Errorf("other arguments still run: %q", routertest.Text(res))
	}
	clk.Advance(10 * time.Second)
	if res := routertest.Call(t, cs, "fx_fail", fail); routertest.Text(res) != "failed: boom" {
		t.Errorf("after the cooldown: %q", routertest.Text(res))
	}
	// Short successful answers never cool.
	for i := range 3 {
		if res := routertest.Call(t, cs, "fx_echo", map[string]any{"message": "hi"}); res.IsError || routertest.Text(res) != "Echo: hi" {
			t.Fatalf("short success %d: %q", i, routertest.Text(res))
		}
	}
}

func TestApprovalSurvivesRateLimitRejection(t *testing.T) {
	clk := newClock()
	h := secured(t, approveEverything, map[string]any{"rateLimit": map[string]any{"requestsPerMinute": 1}}, nil, clk)
	cs := h.Connect(nil)
	h.Booted()
	routertest.Call(t, cs, "fx_slow", map[string]any{"ms": 1}) // spends the only token
	token := routertest.ApprovalToken(t, routertest.Call(t, cs, "fx_echo", map[string]any{"message": "m"}))
	with := map[string]any{"message": "m", "_evokore_approval_token": token}
	if we := rpcError(t, cs, "fx_echo", with); !strings.HasPrefix(we.Message, "Rate limit exceeded") {
		t.Fatalf("expected a rate-limit rejection: %q", we.Message)
	}
	clk.Advance(time.Minute)
	if res := routertest.Call(t, cs, "fx_echo", with); res.IsError {
		t.Errorf("the token was not consumed by the rejection: %s", routertest.Text(res))
	}
}

// A permissions.yml that does not load fails closed: the shipped rules
// apply and every tool no shipped rule names is denied, proxied or
// native, and stderr says why.
func TestBrokenPermissionsFailClosed(t *testing.T) {
	for name, perms := range map[string]string{
		"yaml syntax":  "roles:\n  ops: [\n",
		"schema error": "roles:\n  ops:\n    default_permission: sometimes\n",
		"unknown key":  "rules:\n  fx_echo: allow\nrulez:\n  fx_slow: allow\n",
	} {
		t.Run(name, func(t *testing.T) {
			h := secured(t, perms, nil, nil, nil)
			cs := h.Connect(nil)
			h.Booted()
			for _, tool := range []string{"fx_echo", "claim_list"} {
				if we := rpcError(t, cs, tool, map[string]any{"message": "m"}); we.Message != policy.DeniedText(tool) {
					t.Errorf("%s with a broken permissions.yml: %v", tool, we)
				}
			}
			// A shipped rule still applies: execute_skill waits for a human.
			if res := routertest.Call(t, cs, "execute_skill", map[string]any{"skill_name": "x"}); !strings.HasPrefix(routertest.Text(res), "[EVOKORE-MCP SECURITY INTERCEPTOR]") {
				t.Errorf("execute_skill: %s", routertest.Text(res))
			}
			if log := h.Stderr.String(); !strings.Contains(log, "Failed to load permissions.yml") || !strings.Contains(log, "tools no shipped rule names are denied") {
				t.Errorf("stderr: %s", log)
			}
		})
	}
}

// A named role that is not defined (a typo, another spelling, an
// invisible character) fails closed: only the read-only natives run, and
// the status says why.
func TestUndefinedRoleFailsClosed(t *testing.T) {
	for _, role := range []string{"ReadOnly", "read-only", "readonly\u200b", "admn"} {
		t.Run(role, func(t *testing.T) {
			h := secured(t, "", nil, map[string]string{"EVOKORE_ROLE": role}, nil)
			cs := h.Connect(nil)
			h.Booted()
			we := rpcError(t, cs, "fx_echo", map[string]any{"message": "m"})
			if we.Code != -32600 || !strings.Contains(we.Message, "is not defined") {
				t.Errorf("fx_echo under %q: %v", role, we)
			}
			rpcError(t, cs, "fleet_spawn", map[string]any{"command": "true"})
			if res := routertest.Call(t, cs, "proxy_server_status", map[string]any{}); res.IsError {
				t.Errorf("a read-only native was refused: %s", routertest.Text(res))
			}
			rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "evokore://server/status"})
			if err != nil || !strings.Contains(rr.Contents[0].Text, "is not defined") {
				t.Errorf("status: %v %v", rr, err)
			}
			if !strings.Contains(h.Stderr.String(), "is not defined") {
				t.Errorf("stderr: %s", h.Stderr.String())
			}
		})
	}
}

// A flat deny holds under every role, even one whose default allows all.
func TestFlatDenyHoldsUnderARole(t *testing.T) {
	h := secured(t, "roles:\n  admin:\n    default_permission: allow\nrules:\n  fx_echo: deny\n", nil, map[string]string{"EVOKORE_ROLE": "admin"}, nil)
	cs := h.Connect(nil)
	h.Booted()
	if we := rpcError(t, cs, "fx_echo", map[string]any{"message": "m"}); we.Message != policy.DeniedText("fx_echo") {
		t.Errorf("fx_echo under admin with a flat deny: %v", we)
	}
	if res := routertest.Call(t, cs, "fx_count", map[string]any{}); res.IsError {
		t.Errorf("admin lost what it may do: %s", routertest.Text(res))
	}
}
