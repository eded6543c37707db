package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// The generated matrix must say what compiling the shipped roles says.
func TestShippedMatrixAgreesWithTheRoles(t *testing.T) {
	compiled := NewRBAC(&config.Permissions{Roles: ShippedPermissions().Roles}, false)
	for _, r := range ShippedPermissions().Roles {
		row := shippedMatrix[r.Name]
		if len(row) != native.NumTools {
			t.Fatalf("%s row has %d tools", r.Name, len(row))
		}
		for _, s := range native.Specs() {
			want := ParseLevel(r.DefaultPermission)
			if lvl, ok := r.Overrides[s.Name]; ok {
				want = ParseLevel(lvl)
			}
			if row[s.Name] != want || compiled.Level(r.Name, s.Name) != want {
				t.Errorf("%s/%s: matrix %v, compiled %v, want %v", r.Name, s.Name, row[s.Name], compiled.Level(r.Name, s.Name), want)
			}
		}
	}
}

func TestEditedShippedRoleIsNotAnsweredFromTheMatrix(t *testing.T) {
	perms := config.Permissions{}
	for _, r := range ShippedPermissions().Roles {
		r.Overrides = maps.Clone(r.Overrides)
		if r.Name == "readonly" {
			r.Overrides["get_telemetry"] = config.LevelDeny
		}
		perms.Roles = append(perms.Roles, r)
	}
	rbac := NewRBAC(&perms, false)
	if rbac.Level("readonly", "get_telemetry") != Deny || rbac.Level("readonly", "search_skills") != Allow {
		t.Error("an edited role must be compiled from the file")
	}
}

func TestProcessSpawningNativesWaitForAHumanByDefault(t *testing.T) {
	rbac := NewRBAC(new(ShippedPermissions()), false)
	for _, tool := range []string{"fleet_spawn", "worker_dispatch", "orchestration_start", "execute_skill"} {
		if rbac.Level("", tool) != RequireApproval {
			t.Errorf("%s: %v", tool, rbac.Level("", tool))
		}
	}
}

func TestLimitsRefillAndRefund(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	rpm := 60.0
	l := NewLimits([]config.Server{{ID: "s", RateLimit: &config.RateLimit{RequestsPerMinute: &rpm, ToolLimits: map[string]config.ToolLimit{"t": {Bucket: &config.BucketSpec{MaxTokens: 5}}}}}}, clock)
	for i := range 5 {
		if err := l.Take("", "s", "t"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if err := l.Take("", "s", "t"); err == nil || !strings.Contains(err.Error(), "Rate limit exceeded for s/t. Retry after 1s.") {
		t.Fatalf("tool bucket: %v", err)
	}
	// 55 more server tokens remain; spend them on another tool.
	for range 55 {
		if err := l.Take("", "s", "other"); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Second) // one server token and one tool token back
	if err := l.Take("", "s", "t"); err != nil {
		t.Fatalf("after a second: %v", err)
	}
	if err := l.Take("", "s", "other"); err == nil || !strings.Contains(err.Error(), "Rate limit exceeded for server 's'") {
		t.Fatalf("server bucket: %v", err)
	}
}

func TestCooldownsKeyOnCanonicalArguments(t *testing.T) {
	now := time.Unix(0, 0)
	c := NewCooldowns(func() time.Time { return now })
	c.Fail("", "fx_t", json.RawMessage(`{"a":1,"b":2}`), 10*time.Second)
	if c.Check("", "fx_t", json.RawMessage(`{"b":2,"a":1}`)) == nil {
		t.Error("key order must not matter")
	}
	if c.Check("", "fx_t", json.RawMessage(`{"a":2}`)) != nil {
		t.Error("other arguments are not cooling")
	}
	c.Fail("", "fx_none", nil, 10*time.Second)
	for _, none := range []string{`{}`, `null`, ` null `, ``} {
		if c.Check("", "fx_none", json.RawMessage(none)) == nil {
			t.Errorf("no arguments spelt %q leave the cooldown", none)
		}
	}
	now = now.Add(4 * time.Second)
	if r := c.Check("", "fx_t", json.RawMessage(`{"a":1,"b":2}`)); r == nil || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, "Please wait 6 seconds") {
		t.Errorf("remaining wait: %v", r)
	}
	now = now.Add(6 * time.Second)
	if c.Check("", "fx_t", json.RawMessage(`{"a":1,"b":2}`)) != nil {
		t.Error("the cooldown ends")
	}
}

func TestApprovalFileHoldsOnlyATokenPrefix(t *testing.T) {
	home := t.TempDir()
	a := NewApprovals(home, 5*time.Minute, nil)
	e := catalog.NewEntry(&mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}}, catalog.SourceNative)
	binding, err := Binding("s1", e, json.RawMessage(`{"x":1,"password":"hunter2"}`), "")
	if err != nil {
		t.Fatal(err)
	}
	token := a.Mint(Request{Session: "s1", Tool: "t", Binding: binding, Summary: ShowArguments(json.RawMessage(`{"x":1,"password":"hunter2"}`))})
	if len(token) != TokenLen {
		t.Fatalf("token %q", token)
	}
	pending, err := ListPending(home, time.Now())
	if err != nil || len(pending) != 1 || pending[0].Token != token[:8]+"..." || pending[0].ID != token[:16] {
		t.Fatalf("pending %+v %v", pending, err)
	}
	raw, _ := os.ReadFile(filepath.Join(home, "approvals", "pending-"+a.router+".json"))
	if strings.Contains(string(raw), token[8:]) || strings.Contains(string(raw), "hunter2") {
		t.Errorf("the pending file holds the token or a secret: %s", raw)
	}
	id, state, err := a.Redeem(binding, token)
	if err != nil || state != StateApproved || !a.Consume(id) || a.Consume(id) {
		t.Error("a valid token is consumed exactly once")
	}
}

// BenchmarkPolicyStages is the per-call cost of permission, approval
// check (no token needed), rate limit and cooldown for a proxied tool.
func BenchmarkPolicyStages(b *testing.B) {
	rpm := 1e9
	servers := []config.Server{{ID: "fx", RateLimit: &config.RateLimit{RequestsPerMinute: &rpm}}}
	p := New(Options{Permissions: new(ShippedPermissions()), Servers: servers, ApprovalTTL: time.Minute, Cooldown: 10 * time.Second})
	st := p.Stages()
	entry := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}})
	sess := session.New("s", "developer")
	args := json.RawMessage(`{"message":"a longer benchmark message","n":3}`)
	ctx := context.Background()
	stages := []router.Stage{st.Permission, st.Approval, st.RateLimit, st.Cooldown}
	sess.Role = ""
	b.ReportAllocs()
	for b.Loop() {
		c := &router.Call{Entry: entry, Session: sess, Args: args}
		for _, st := range stages {
			if res, err := st.Check(ctx, c); res != nil || err != nil {
				b.Fatal(res, err)
			}
		}
	}
}

// BenchmarkPolicyStagesWhileCooling is the same with another call cooling
// down, so the cooldown stage canonicalises the arguments.
func BenchmarkPolicyStagesWhileCooling(b *testing.B) {
	p := New(Options{Permissions: new(ShippedPermissions()), ApprovalTTL: time.Minute, Cooldown: 10 * time.Second})
	st := p.Stages()
	entry := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}})
	p.Cooldowns.Fail("", "fx_other", json.RawMessage(`{}`), time.Hour)
	sess := session.New("s", "")
	args := json.RawMessage(`{"message":"a longer benchmark message","n":3}`)
	ctx := context.Background()
	stages := []router.Stage{st.Permission, st.Approval, st.RateLimit, st.Cooldown}
	b.ReportAllocs()
	for b.Loop() {
		c := &router.Call{Entry: entry, Session: sess, Args: args}
		for _, st := range stages {
			if res, err := st.Check(ctx, c); res != nil || err != nil {
				b.Fatal(res, err)
			}
		}
	}
}

// A reload keeps the bucket of a limit that did not change, tokens spent
// included, and builds a fresh one for a limit that did: editing
// mcp.config.json must not refill a budget.
func TestReloadKeepsUnchangedBuckets(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	rpm := func(n float64) *config.RateLimit { return &config.RateLimit{RequestsPerMinute: &n} }
	servers := []config.Server{{ID: "kept", RateLimit: rpm(2)}, {ID: "changed", RateLimit: rpm(2)}}
	p := New(Options{Permissions: new(ShippedPermissions()), Servers: servers, Now: clock, Home: t.TempDir()})
	for _, id := range []string{"kept", "changed"} {
		for range 2 {
			if err := p.Rules().Limits.Take("", id, "t"); err != nil {
				t.Fatal(err)
			}
		}
	}
	servers[1].RateLimit = rpm(3)
	p.Reload(Options{Permissions: new(ShippedPermissions()), Servers: servers})
	if err := p.Rules().Limits.Take("", "kept", "t"); err == nil {
		t.Error("a reload refilled an unchanged bucket")
	}
	if err := p.Rules().Limits.Take("", "changed", "t"); err != nil {
		t.Errorf("a changed limit did not get its new bucket: %v", err)
	}
}

// A program's call held for the operator whose approval is revoked (or
// expires, or is evicted) while it waits files a new one: that one is
// announced as the first was, so the operator's records (audit log,
// webhooks, dashboard) name an id that exists, and approving it runs the
// call.
func TestHeldProgramCallAnnouncesItsRenewedApproval(t *testing.T) {
	home := t.TempDir()
	events := make(chan ApprovalEvent, 8)
	p := New(Options{Permissions: new(ShippedPermissions()), Home: home, ApprovalTTL: time.Minute, Cooldown: time.Second,
		OnApproval: func(e ApprovalEvent) { events <- e }})
	entry := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}})
	c := &router.Call{Entry: entry, Session: session.New("s", ""), Args: json.RawMessage(`{}`), NeedsApproval: true, Run: "run-1"}
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := p.Stages().Approval.Check(t.Context(), c)
		done <- res
	}()
	next := func() ApprovalEvent {
		t.Helper()
		select {
		case e := <-events:
			return e
		case res := <-done:
			t.Fatalf("the held call ended: %+v", res)
		case <-time.After(10 * time.Second):
			t.Fatal("no approval event")
		}
		return ApprovalEvent{}
	}
	first := next()
	if first.Kind != StatePending || first.ID == "" {
		t.Fatalf("first event %+v", first)
	}
	p.Approvals.RevokeTool(entry.Name)
	renewed := next()
	if renewed.Kind != StatePending || renewed.ID == "" || renewed.ID == first.ID {
		t.Fatalf("after the revocation: %+v, want a new pending approval", renewed)
	}
	if err := ApproveApproval(home, renewed.ID, time.Now()); err != nil {
		t.Fatalf("approving the announced id: %v", err)
	}
	if res := <-done; res != nil {
		t.Fatalf("the approved call was refused: %+v", res)
	}
}

// Each caller spends buckets of its own; callers that come and go leave
// no bucket behind once theirs are full again, and one caller's spent
// bucket survives the others' coming.
func TestLimitsPerCallerForgetFullBuckets(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	rpm := 60.0
	l := NewLimits([]config.Server{{ID: "s", RateLimit: &config.RateLimit{RequestsPerMinute: &rpm}}}, clock)
	for range 60 {
		if err := l.Take("alice", "s", "t"); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Take("alice", "s", "t"); err == nil {
		t.Fatal("alice's 61st call in a minute passed")
	}
	if err := l.Take("bob", "s", "t"); err != nil {
		t.Fatalf("bob is limited by alice's rate: %v", err)
	}
	for i := range 3 * maxIdleBuckets {
		if err := l.Take(fmt.Sprint("caller-", i), "s", "t"); err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
		if i%1000 == 0 {
			now = now.Add(time.Second) // the callers before are full again
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buckets[bucketKey{"s", "alice"}] == nil {
		t.Error("alice's spent bucket was forgotten")
	}
	if n := len(l.buckets); n > 2*maxIdleBuckets {
		t.Errorf("%d buckets kept for callers whose buckets refilled", n)
	}
}
