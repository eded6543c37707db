package sharedstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/sharedstate"
	"github.com/evokore/evokore/internal/testutil"
)

// replicas opens n independent connections to one Redis, as n evokore
// processes would: each its own client, the same prefix.
func replicas(t testing.TB, n int, extra map[string]string) []*sharedstate.Shared {
	t.Helper()
	url := testutil.RedisServer(t)
	vars := map[string]string{"EVOKORE_SESSION_STORE": "redis", "EVOKORE_REDIS_URL": url, "EVOKORE_REDIS_KEY_PREFIX": "test:", "EVOKORE_HOME": t.TempDir()}
	for k, v := range extra {
		vars[k] = v
	}
	o := sharedstate.ReadOptions(config.NewEnv(vars), vars["EVOKORE_HOME"], time.Hour)
	var out []*sharedstate.Shared
	for range n {
		sh, err := sharedstate.Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sh.Close() })
		out = append(out, sh)
	}
	return out
}

func servers(rpm float64, toolMax int) []config.Server {
	rl := &config.RateLimit{RequestsPerMinute: &rpm}
	if toolMax > 0 {
		rl.ToolLimits = map[string]config.ToolLimit{"t": {Bucket: &config.BucketSpec{MaxTokens: toolMax}}}
	}
	return []config.Server{{ID: "s", RateLimit: rl}}
}

// A caller's limit of N calls a minute holds for the three replicas
// together, not N for each: exactly N of 3N calls made round-robin pass,
// and the rest get the same refusal a single router gives. Another
// caller's calls spend a bucket of their own, on every replica.
func TestRateLimitHoldsAcrossReplicas(t *testing.T) {
	const n = 7
	var limits []*policy.Limits
	for _, sh := range replicas(t, 3, nil) {
		l := policy.NewLimits(servers(n, 0), nil)
		l.Share(sh.Limiter)
		limits = append(limits, l)
	}
	passed := 0
	var refusal error
	for i := range 3 * n {
		if err := limits[i%3].TakeContext(context.Background(), "subject\x00t\x00alice", "s", "t"); err == nil {
			passed++
		} else {
			refusal = err
		}
	}
	if passed != n {
		t.Fatalf("%d calls passed across three replicas, want %d in total", passed, n)
	}
	if refusal == nil || !strings.HasPrefix(refusal.Error(), "Rate limit exceeded for server 's'. Retry after ") {
		t.Fatalf("refusal = %v", refusal)
	}
	for i := range n {
		if err := limits[i%3].TakeContext(context.Background(), "subject\x00t\x00bob", "s", "t"); err != nil {
			t.Fatalf("bob's call %d is limited by alice's: %v", i, err)
		}
	}
}

// A call spends its tool and its server bucket together or not at all,
// across replicas as in one process.
func TestSharedBucketsAreSpentAllOrNone(t *testing.T) {
	sh := replicas(t, 2, nil)
	a, b := policy.NewLimits(servers(2, 5), nil), policy.NewLimits(servers(2, 5), nil)
	// Tool bucket 5, server bucket 2: after two calls the server refuses,
	// and the refused calls must not eat the tool's tokens.
	a.Share(sh[0].Limiter)
	b.Share(sh[1].Limiter)
	for i, l := range []*policy.Limits{a, b} {
		if err := l.Take("", "s", "t"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	for range 10 {
		if err := a.Take("", "s", "t"); err == nil || !strings.Contains(err.Error(), "server 's'") {
			t.Fatalf("want the server's refusal, got %v", err)
		}
	}
	ttl, err := sh[0].Client.PTTL(context.Background(), "test:ratelimit:s/t").Result()
	if err != nil || ttl <= 0 {
		t.Fatalf("tool bucket key PTTL = %v, %v", ttl, err)
	}
	// Two tokens spent of five: the key empties (the bucket is full again)
	// well within the time three tokens take to refill at 5/min.
	if ttl > 25*time.Second {
		t.Fatalf("refused calls spent tool tokens: the bucket is full again only in %v", ttl)
	}
}

func entry() *catalog.Entry {
	return catalog.NewEntry(&mcp.Tool{Name: "s_write", InputSchema: map[string]any{"type": "object"}}, catalog.SourceProxy)
}

// A token minted by replica 1 is honoured by replica 2, runs once there,
// and never again anywhere: of three replicas consuming it at once,
// exactly one wins.
func TestApprovalMintedOnOneReplicaRunsOnceOnAnother(t *testing.T) {
	sh := replicas(t, 3, nil)
	var reps []*policy.Approvals
	for _, s := range sh {
		a := policy.NewApprovals("", 5*time.Minute, nil)
		if err := a.Share(s.Approvals, s.Key); err != nil {
			t.Fatal(err)
		}
		reps = append(reps, a)
	}
	binding, err := policy.Binding("sess", entry(), json.RawMessage(`{"path":"/x"}`), "")
	if err != nil {
		t.Fatal(err)
	}
	token, err := reps[0].MintChecked(policy.Request{Session: "sess", Tool: "s_write", Binding: binding})
	if err != nil || len(token) != policy.TokenLen {
		t.Fatalf("Mint = %q, %v", token, err)
	}
	other, _ := policy.Binding("sess", entry(), json.RawMessage(`{"path":"/y"}`), "")
	if id, _, _ := reps[1].Redeem(other, token); id != "" {
		t.Fatal("a token redeemed for other arguments")
	}
	forged := token[:16] + strings.Repeat("0", policy.TokenLen-16)
	if id, _, _ := reps[1].Redeem(binding, forged); id != "" {
		t.Fatal("a token with a forged MAC redeemed")
	}
	pending, err := policy.ListShared(context.Background(), sh[2].Approvals)
	if err != nil || len(pending) != 1 || pending[0].Token != token[:8]+"..." || pending[0].ID != token[:16] {
		t.Fatalf("replica 3 lists %+v, %v", pending, err)
	}
	var ids [3]string
	for i, r := range reps {
		id, state, err := r.Redeem(binding, token)
		if err != nil || state != policy.StateApproved {
			t.Fatalf("replica %d: Redeem = %q %q %v", i+1, id, state, err)
		}
		ids[i] = id
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i, r := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.Consume(ids[i]) {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d replicas ran the approved call, want exactly 1", wins.Load())
	}
	for i, r := range reps {
		if id, _, _ := r.Redeem(binding, token); id != "" || r.Consume(ids[i]) {
			t.Fatalf("replica %d honours a used token", i+1)
		}
	}
}

// Operator mode: a call held on one replica is listed on every replica,
// the operator approves it from anywhere, and the retry runs once on
// whichever replica it lands; a denial wins over an approval.
func TestOperatorApprovalsAreVisibleAndDecidedAcrossReplicas(t *testing.T) {
	sh := replicas(t, 2, nil)
	var reps []*policy.Approvals
	for _, s := range sh {
		a := policy.NewApprovals("", 5*time.Minute, nil)
		if err := a.Share(s.Approvals, s.Key); err != nil {
			t.Fatal(err)
		}
		reps = append(reps, a)
	}
	ctx := context.Background()
	b1, _ := policy.Binding("sess", entry(), json.RawMessage(`{"n":1}`), "")
	b2, _ := policy.Binding("sess", entry(), json.RawMessage(`{"n":2}`), "")
	out, err := reps[0].Ask(policy.Request{Session: "sess", Tool: "s_write", Binding: b1, Summary: `{"n":1}`})
	if err != nil || out.State != policy.StatePending || !out.New {
		t.Fatalf("Ask = %+v, %v: want a new pending approval (announced to the operator)", out, err)
	}
	again, _ := reps[1].Ask(policy.Request{Session: "sess", Tool: "s_write", Binding: b1})
	if again.ID != out.ID || again.New {
		t.Fatalf("the same call held twice: %+v and %+v", out, again)
	}
	denyMe, _ := reps[1].Ask(policy.Request{Session: "sess", Tool: "s_write", Binding: b2})
	if n := reps[0].PendingCount(); n != 2 {
		t.Fatalf("replica 1 counts %d pending approvals, want the 2 held across replicas", n)
	}
	list, err := policy.ListShared(ctx, sh[1].Approvals)
	if err != nil || len(list) != 2 || list[0].ID != out.ID || list[0].Arguments != `{"n":1}` {
		t.Fatalf("ListShared = %+v, %v", list, err)
	}
	if err := sh[1].Approvals.Decide(ctx, out.ID, policy.StateApproved); err != nil {
		t.Fatal(err)
	}
	if err := sh[0].Approvals.Decide(ctx, denyMe.ID, policy.StateDenied); err != nil {
		t.Fatal(err)
	}
	if err := sh[1].Approvals.Decide(ctx, denyMe.ID, policy.StateApproved); !errors.Is(err, policy.ErrApprovalDenied) {
		t.Fatalf("approving a denied approval: %v", err)
	}
	if err := sh[1].Approvals.Decide(ctx, "0000000000000000", policy.StateApproved); !errors.Is(err, policy.ErrNoApproval) {
		t.Fatalf("deciding an unknown id: %v", err)
	}
	if d, _ := reps[0].Ask(policy.Request{Session: "sess", Tool: "s_write", Binding: b2}); d.State != policy.StateDenied {
		t.Fatalf("denied call asks again as %q", d.State)
	}
	got, _ := reps[1].Ask(policy.Request{Session: "sess", Tool: "s_write", Binding: b1})
	if got.State != policy.StateApproved || !reps[1].Consume(got.ID) || reps[0].Consume(got.ID) {
		t.Fatalf("approved call: %+v does not run exactly once", got)
	}
	if next, _ := reps[0].Ask(policy.Request{Session: "sess", Tool: "s_write", Binding: b1}); next.State != policy.StatePending || next.ID == got.ID {
		t.Fatalf("after its run the call must be held afresh, got %+v", next)
	}
	reps[0].RevokeTool("s_write")
	if list, _ := policy.ListShared(ctx, sh[1].Approvals); len(list) != 0 {
		t.Fatalf("RevokeTool left %+v", list)
	}
}

// The key comes from EVOKORE_APPROVAL_KEY_FILE when set: every replica
// reading the same file signs alike; a short key is refused.
func TestApprovalKeyFromFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "key")
	if err := os.WriteFile(good, []byte(strings.Repeat("k", 40)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sh := replicas(t, 2, map[string]string{"EVOKORE_APPROVAL_KEY_FILE": good})
	if string(sh[0].Key) != strings.Repeat("k", 40) || string(sh[1].Key) != string(sh[0].Key) {
		t.Fatalf("keys %q %q", sh[0].Key, sh[1].Key)
	}
	if n, _ := sh[0].Client.Exists(context.Background(), "test:approval-key").Result(); n != 0 {
		t.Fatal("a key file was given, yet a key was stored in Redis")
	}
	short := filepath.Join(dir, "short")
	_ = os.WriteFile(short, []byte("tooshort"), 0o600)
	if _, err := sharedstate.ApprovalKey(context.Background(), sh[0].Client, "test:", short); err == nil {
		t.Fatal("a short key accepted")
	}
}

// Without a key file the replicas agree on the key stored in Redis.
func TestApprovalKeyFromRedisIsTheSameForAll(t *testing.T) {
	sh := replicas(t, 3, nil)
	for _, s := range sh[1:] {
		if string(s.Key) != string(sh[0].Key) || len(s.Key) < 32 {
			t.Fatal("replicas sign with different keys")
		}
	}
}

// When Redis goes away, a limited call and an approval-gated call are
// refused, never waved through.
func TestRedisDownFailsClosed(t *testing.T) {
	sh := replicas(t, 1, nil)[0]
	l := policy.NewLimits(servers(100, 0), nil)
	l.Share(sh.Limiter)
	a := policy.NewApprovals("", 5*time.Minute, nil)
	if err := a.Share(sh.Approvals, sh.Key); err != nil {
		t.Fatal(err)
	}
	binding, _ := policy.Binding("sess", entry(), nil, "")
	token, _ := a.MintChecked(policy.Request{Session: "sess", Tool: "s_write", Binding: binding})
	id, _, _ := a.Redeem(binding, token)
	if err := sh.Client.Shutdown(context.Background()).Err(); err != nil && !strings.Contains(err.Error(), "EOF") {
		t.Logf("shutdown: %v", err)
	}
	if err := l.Take("", "s", "t"); err == nil || !strings.Contains(err.Error(), "cannot be checked") {
		t.Fatalf("limited call with Redis down: %v", err)
	}
	if a.Consume(id) {
		t.Fatal("an approval consumed with Redis down")
	}
	if _, err := a.MintChecked(policy.Request{Session: "sess", Tool: "s_write", Binding: binding}); err == nil {
		t.Fatal("a token minted with Redis down")
	}
}

func replicasB(b *testing.B) *sharedstate.Shared { return replicas(b, 1, nil)[0] }
