package policy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// A token minted for one definition of a tool must not run the tool once
// the child changed its definition (same name, other schema).
func TestApprovalTokenBindsToTheDefinitionHash(t *testing.T) {
	p := New(Options{Permissions: &config.Permissions{Rules: map[string]string{"fx_rm": config.LevelRequireApproval}},
		ApprovalTTL: 5 * time.Minute, Home: t.TempDir(), ApprovalMode: ModeToken})
	st := p.Stages()
	before := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "rm", Description: "remove a file", InputSchema: map[string]any{"type": "object"}})
	after := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "rm", Description: "remove a file or a tree", InputSchema: map[string]any{"type": "object"}})
	if before.Name != after.Name || before.Hash == after.Hash {
		t.Fatalf("fixture: names %q %q, hashes %q %q", before.Name, after.Name, before.Hash, after.Hash)
	}
	sess := session.New("s1", "")
	args := json.RawMessage(`{"path":"/tmp/x"}`)
	run := func(e *catalog.Entry, args json.RawMessage) (*mcp.CallToolResult, error) {
		c := &router.Call{Entry: e, Session: sess, Args: args}
		for _, stage := range []router.Stage{st.Permission, st.Approval} {
			if res, err := stage.Check(context.Background(), c); res != nil || err != nil {
				return res, err
			}
		}
		return nil, nil
	}
	res, err := run(before, args)
	if err != nil || res == nil || !res.IsError {
		t.Fatalf("first call must be intercepted: %v %v", res, err)
	}
	token := tokenIn(t, res)
	withToken := json.RawMessage(`{"path":"/tmp/x","` + TokenField + `":"` + token + `"}`)
	// The changed definition: intercepted again, a fresh token.
	res, err = run(after, withToken)
	if err != nil || res == nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "_evokore_approval_token") {
		t.Fatalf("a token for the old definition ran the changed tool: %v %v", res, err)
	}
	if tokenIn(t, res) == token {
		t.Fatal("the same token was offered again")
	}
	// The unchanged definition still takes the token.
	if res, err := run(before, withToken); res != nil || err != nil {
		t.Fatalf("the token for this definition must pass: %v %v", res, err)
	}
}

func tokenIn(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	text := res.Content[0].(*mcp.TextContent).Text
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return !strings.ContainsRune("0123456789abcdef", r) }) {
		if len(f) == TokenLen {
			return f
		}
	}
	t.Fatalf("no token in %q", text)
	return ""
}

// Binding directly: the hash is part of what is bound.
func TestBindingChangesWithTheDefinitionOnly(t *testing.T) {
	a := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "rm", InputSchema: map[string]any{"type": "object"}})
	b := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "rm", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"force": map[string]any{"type": "boolean"}}}})
	args := json.RawMessage(`{"p":1}`)
	ba, _ := Binding("s", a, args, "")
	bb, _ := Binding("s", b, args, "")
	ba2, _ := Binding("s", a, json.RawMessage(`{ "p" : 1 }`), "")
	if ba == bb {
		t.Error("two definitions share a binding")
	}
	if ba != ba2 {
		t.Error("the same call gives two bindings")
	}
	for name, other := range map[string]func() (string, error){
		"session":   func() (string, error) { return Binding("s2", a, args, "") },
		"arguments": func() (string, error) { return Binding("s", a, json.RawMessage(`{"p":2}`), "") },
		"extra":     func() (string, error) { return Binding("s", a, args, "code") },
	} {
		if got, _ := other(); got == ba {
			t.Errorf("another %s gives the same binding", name)
		}
	}
}

// When the server bucket rejects, the tool token taken first is given
// back: the next call, once the server refilled, still has it.
func TestToolTokenRefundedWhenTheServerBucketRejects(t *testing.T) {
	now := time.Unix(0, 0)
	one, hour, sec := 1.0, 3_600_000, 1000
	l := NewLimits([]config.Server{{ID: "s", RateLimit: &config.RateLimit{
		MaxTokens: new(1), RefillRate: &one, RefillIntervalMs: &sec,
		ToolLimits: map[string]config.ToolLimit{"t": {Bucket: &config.BucketSpec{MaxTokens: 2, RefillRate: &one, RefillIntervalMs: &hour}}},
	}}}, func() time.Time { return now })
	if err := l.Take("", "s", "t"); err != nil {
		t.Fatal(err)
	}
	// Server empty: rejected by the server bucket, the tool token refunded.
	for range 3 {
		if err := l.Take("", "s", "t"); err == nil || !strings.Contains(err.Error(), "server 's'") {
			t.Fatalf("want the server bucket's rejection, got %v", err)
		}
	}
	now = now.Add(time.Second) // the server refills; the tool would not for an hour
	if err := l.Take("", "s", "t"); err != nil {
		t.Fatalf("the refunded tool token is missing: %v", err)
	}
	if err := l.Take("", "s", "t"); err == nil {
		t.Fatal("the tool bucket held more than its two tokens")
	}
}

// cooldownMs per server: its own duration, and 0 turns the cooldown off.
func TestPerServerCooldownMs(t *testing.T) {
	now := time.Unix(0, 0)
	short, off := 2000, 0
	p := New(Options{Permissions: &config.Permissions{}, Cooldown: 10 * time.Second, Now: func() time.Time { return now },
		Servers: []config.Server{{ID: "fast", CooldownMs: &short}, {ID: "off", CooldownMs: &off}, {ID: "std"}}})
	st := p.Stages()
	obs := p.Observers()[0]
	sess := session.New("s", "")
	args := json.RawMessage(`{"a":1}`)
	fail := &mcp.CallToolResult{IsError: true}
	check := func(server string) *mcp.CallToolResult {
		e := catalog.NewProxyEntry(server, &mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}})
		res, _ := st.Cooldown.Check(context.Background(), &router.Call{Entry: e, Session: sess, Args: args})
		return res
	}
	for _, server := range []string{"fast", "off", "std"} {
		e := catalog.NewProxyEntry(server, &mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}})
		obs.Observe(context.Background(), router.Outcome{Call: &router.Call{Entry: e, Session: sess, Args: args}, Result: fail})
	}
	if check("off") != nil {
		t.Error("cooldownMs 0 must turn the cooldown off")
	}
	if r := check("fast"); r == nil || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, "Please wait 2 seconds") {
		t.Errorf("fast: %v", r)
	}
	if r := check("std"); r == nil || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, "Please wait 10 seconds") {
		t.Errorf("std: %v", r)
	}
	now = now.Add(2 * time.Second)
	if check("fast") != nil {
		t.Error("fast must have cooled after its 2 s")
	}
	if check("std") == nil {
		t.Error("std cools for the default 10 s")
	}
}

// The HMAC key lives in memory only: a token minted before a restart (a
// new Approvals over the same EVOKORE_HOME) is not honoured after it.
func TestTokensDoNotSurviveARestart(t *testing.T) {
	home := t.TempDir()
	e := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "rm", InputSchema: map[string]any{"type": "object"}})
	binding, err := Binding("s1", e, json.RawMessage(`{}`), "")
	if err != nil {
		t.Fatal(err)
	}
	first := NewApprovals(home, 5*time.Minute, nil)
	token := first.Mint(Request{Session: "s1", Tool: e.Name, Binding: binding})
	if id, state, _ := first.Redeem(binding, token); id == "" || state != StateApproved {
		t.Fatalf("the minting router must honour its token: %q %q", id, state)
	}
	first.Close()
	second := NewApprovals(home, 5*time.Minute, nil)
	defer second.Close()
	if id, state, err := second.Redeem(binding, token); id != "" || state != "" || err != nil {
		t.Errorf("a token survived a restart: %q %q %v", id, state, err)
	}
	for _, f := range []string{"approvals"} {
		entries, _ := os.ReadDir(filepath.Join(home, f))
		for _, de := range entries {
			raw, _ := os.ReadFile(filepath.Join(home, f, de.Name()))
			if strings.Contains(string(raw), token[16:]) {
				t.Errorf("%s holds the token's MAC", de.Name())
			}
		}
	}
}

// ran is the result of a call that reached its tool.
var ran = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}

type dispatchFunc func(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error)

func (f dispatchFunc) CallTool(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	return f(ctx, c)
}

// runGated takes c through a real pipeline with the policy's permission
// and approval stages; a call that reaches its tool answers ran.
func runGated(p *Policy, c *router.Call) (*mcp.CallToolResult, error) {
	st := p.Stages()
	r := router.New(router.Options{Stages: []router.Stage{st.Permission, st.Approval},
		Proxy: dispatchFunc(func(context.Context, *router.Call) (*mcp.CallToolResult, error) { return ran, nil })})
	return r.Run(context.Background(), c)
}

// Operator mode (the default without elicitation): a gated call is held
// under an approval id; it runs once after an operator approves it, never
// after a denial, and every other call of the same tool is held anew.
func TestOperatorModeHoldsApprovesOnceAndDenies(t *testing.T) {
	home := t.TempDir()
	p := New(Options{Permissions: &config.Permissions{Rules: map[string]string{"fx_rm": config.LevelRequireApproval, "fx_ls": config.LevelAllow}},
		ApprovalTTL: 5 * time.Minute, Home: home, ApprovalMode: ModeOperator})
	defer p.Approvals.Close()
	rm := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "rm", InputSchema: map[string]any{"type": "object"}})
	ls := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "ls", InputSchema: map[string]any{"type": "object"}})
	sess := session.New("s1", "")
	call := func(e *catalog.Entry, args string) (*mcp.CallToolResult, error) {
		return runGated(p, &router.Call{Entry: e, Session: sess, Args: json.RawMessage(args)})
	}
	if res, err := call(ls, `{}`); res != ran || err != nil {
		t.Fatalf("an allowed tool is held: %v %v", res, err)
	}
	res, err := call(rm, `{"p":1}`)
	if err != nil || res == nil || !res.IsError {
		t.Fatalf("a gated call ran without an operator: %v %v", res, err)
	}
	pending, err := ListPending(home, time.Now())
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending: %+v %v", pending, err)
	}
	id := pending[0].ID
	if !strings.Contains(res.Content[0].(*mcp.TextContent).Text, id) {
		t.Errorf("the held text does not name the approval id %s: %s", id, res.Content[0].(*mcp.TextContent).Text)
	}
	// Still pending: held again under the same id, not run.
	if res, _ := call(rm, `{"p":1}`); res == nil || !res.IsError {
		t.Fatal("a pending call ran")
	}
	if err := ApproveApproval(home, id, time.Now()); err != nil {
		t.Fatal(err)
	}
	if res, _ := call(rm, `{"p":2}`); res == nil || !res.IsError {
		t.Fatal("other arguments ran on this approval")
	}
	// The {"p":2} call is pending under its own id.
	pending, _ = ListPending(home, time.Now())
	var other string
	for _, pa := range pending {
		if pa.ID != id {
			other = pa.ID
		}
	}
	if len(pending) != 2 || other == "" {
		t.Fatalf("want a second pending approval for the other arguments: %+v", pending)
	}
	if res, err := call(rm, `{"p":1}`); res != ran || err != nil {
		t.Fatalf("the approved call must run: %v %v", res, err)
	}
	if res, _ := call(rm, `{"p":1}`); res == nil || !res.IsError {
		t.Fatal("an approval ran twice")
	}
	if err := DenyApproval(home, other, time.Now()); err != nil {
		t.Fatal(err)
	}
	res, _ = call(rm, `{"p":2}`)
	if res == nil || !res.IsError || res.Content[0].(*mcp.TextContent).Text != DeniedApprovalText("fx_rm", other) {
		t.Errorf("a denied call: %v", res.Content[0].(*mcp.TextContent).Text)
	}
}

// Under a role the permissions do not define, only read-only natives run.
func TestUndefinedRoleRunsOnlyReadOnlyNatives(t *testing.T) {
	p := New(Options{Permissions: new(ShippedPermissions()), ApprovalTTL: time.Minute, Home: t.TempDir()})
	st := p.Stages()
	sess := session.New("s", "admn")
	readOnly := catalog.NewEntry(&mcp.Tool{Name: "proxy_server_status", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, catalog.SourceNative)
	writer := catalog.NewEntry(&mcp.Tool{Name: "memory_store", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{}}, catalog.SourceNative)
	proxied := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "ls", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}})
	if res, err := st.Permission.Check(context.Background(), &router.Call{Entry: readOnly, Session: sess}); res != nil || err != nil {
		t.Errorf("a read-only native is refused: %v %v", res, err)
	}
	for _, e := range []*catalog.Entry{writer, proxied} {
		if _, err := st.Permission.Check(context.Background(), &router.Call{Entry: e, Session: sess}); err == nil || !strings.Contains(err.Error(), "is not defined") {
			t.Errorf("%s under an undefined role: %v", e.Name, err)
		}
	}
}

// The token is taken out of the arguments of every call, gated or not,
// however its key is escaped.
func TestTokenIsStrippedFromEveryCall(t *testing.T) {
	p := New(Options{Permissions: &config.Permissions{}, ApprovalTTL: time.Minute, Home: t.TempDir()})
	e := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "ls", InputSchema: map[string]any{"type": "object"}})
	for _, args := range []string{`{"a":1,"_evokore_approval_token":"x"}`, `{"a":1,"\u005fevokore_approval_token":"x"}`} {
		c := &router.Call{Entry: e, Session: session.New("s", ""), Args: json.RawMessage(args)}
		if res, err := runGated(p, c); res != ran || err != nil {
			t.Fatal(res, err)
		}
		if string(c.Args) != `{"a":1}` {
			t.Errorf("%s became %s", args, c.Args)
		}
	}
}

// The approved call carries what its binder bound to the tool that runs
// it, which checks it against what it is about to run (execute_skill).
func TestApprovedCallCarriesWhatItsBinderBound(t *testing.T) {
	home := t.TempDir()
	p := New(Options{Permissions: &config.Permissions{Rules: map[string]string{"fx_run": config.LevelRequireApproval}},
		ApprovalTTL: 5 * time.Minute, Home: home, ApprovalMode: ModeOperator,
		Binders: map[string]Binder{"fx_run": func(json.RawMessage) (Bound, error) {
			return Bound{Key: "code-v1", Shown: "runs:\nrm -rf \x1b[2J~"}, nil
		}}})
	defer p.Approvals.Close()
	e := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "run", InputSchema: map[string]any{"type": "object"}})
	var bound string
	r := router.New(router.Options{Stages: []router.Stage{p.Stages().Permission, p.Stages().Approval},
		Proxy: dispatchFunc(func(_ context.Context, c *router.Call) (*mcp.CallToolResult, error) { bound = c.Bound; return ran, nil })})
	call := func() *mcp.CallToolResult {
		res, _ := r.Run(context.Background(), &router.Call{Entry: e, Session: session.New("s1", ""), Args: json.RawMessage(`{}`)})
		return res
	}
	call()
	pending, _ := ListPending(home, time.Now())
	if len(pending) != 1 || ApproveApproval(home, pending[0].ID, time.Now()) != nil {
		t.Fatalf("pending: %+v", pending)
	}
	// The human is shown what the binding holds, escaped, under the
	// arguments.
	if want := "\n| runs:\n| rm -rf \\u001b[2J~"; !strings.HasSuffix(pending[0].Arguments, want) {
		t.Errorf("the held call shows %q, want it to end %q", pending[0].Arguments, want)
	}
	if res := call(); res != ran || bound != "code-v1" {
		t.Fatalf("the approved call ran %v with bound %q, want code-v1", res == ran, bound)
	}
}
