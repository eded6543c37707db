package claims_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native/claims"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// helperEnv makes the test binary act as one competing acquirer: it waits
// for the start file, tries the claim and prints "won" or "held".
const helperEnv = "EVOKORE_CLAIMS_TEST_HELPER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(helper(dir))
	}
	os.Exit(m.Run())
}

func helper(dir string) int {
	for {
		if _, err := os.Stat(filepath.Join(dir, "start")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	s := claims.NewStore(filepath.Join(dir, "home", ".claims"))
	_, err := s.Acquire("shared-resource", fmt.Sprintf("proc-%d", os.Getpid()), time.Minute, os.Getppid())
	switch err.(type) {
	case nil:
		fmt.Println("won")
	case *claims.HeldError:
		fmt.Println("held")
	default:
		fmt.Println("error:", err)
		return 1
	}
	return 0
}

type listed struct {
	Claims []claims.Status `json:"claims"`
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func writeLock(t *testing.T, home, resource string, body any) string {
	t.Helper()
	s := claims.NewStore(filepath.Join(home, ".claims"))
	if err := os.MkdirAll(s.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	var data []byte
	switch b := body.(type) {
	case string:
		data = []byte(b)
	default:
		data, _ = json.Marshal(b)
	}
	p := s.PathFor(resource)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAcquireReleaseAndOwnership(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)

	text, isErr := routertest.CallText(t, cs, "claim_acquire", map[string]any{"resource": "file:/src/a.go", "agentId": "alpha"})
	if isErr {
		t.Fatalf("acquire failed: %s", text)
	}
	c := routertest.DecodeJSON[claims.Claim](t, text)
	if c.Resource != "file:/src/a.go" || c.AgentID != "alpha" || c.TTLMs != 30000 || c.PID != os.Getppid() {
		t.Errorf("claim = %+v (want the default ttl and the router's parent as the owner)", c)
	}
	acq, err1 := time.Parse(time.RFC3339, c.Acquired)
	exp, err2 := time.Parse(time.RFC3339, c.ExpiresAt)
	if err1 != nil || err2 != nil || exp.Sub(acq) != 30*time.Second {
		t.Errorf("acquired %q, expiresAt %q", c.Acquired, c.ExpiresAt)
	}
	if _, err := os.Stat(claims.NewStore(filepath.Join(h.Dir, "home", ".claims")).PathFor("file:/src/a.go")); err != nil {
		t.Errorf("no lock file: %v", err)
	}

	text, isErr = routertest.CallText(t, cs, "claim_acquire", map[string]any{"resource": "file:/src/a.go", "agentId": "beta", "ttlMs": 5000})
	want := fmt.Sprintf("Resource 'file:/src/a.go' is already claimed by agent 'alpha' (pid %d, expires %s)", c.PID, c.ExpiresAt)
	if !isErr || text != want {
		t.Errorf("second acquire = %v %q, want error %q", isErr, text, want)
	}
	// The holder itself cannot take it twice either.
	if _, isErr = routertest.CallText(t, cs, "claim_acquire", map[string]any{"resource": "file:/src/a.go", "agentId": "alpha"}); !isErr {
		t.Error("re-acquiring a live claim should fail")
	}

	text, _ = routertest.CallText(t, cs, "claim_release", map[string]any{"resource": "file:/src/a.go", "agentId": "beta"})
	if text != "{\n  \"released\": false\n}" {
		t.Errorf("release by a non-owner = %s", text)
	}
	text, _ = routertest.CallText(t, cs, "claim_release", map[string]any{"resource": "file:/src/a.go", "agentId": "alpha"})
	if routertest.DecodeJSON[map[string]bool](t, text)["released"] != true {
		t.Errorf("release by the owner = %s", text)
	}
	text, _ = routertest.CallText(t, cs, "claim_release", map[string]any{"resource": "file:/src/a.go", "agentId": "alpha"})
	if routertest.DecodeJSON[map[string]bool](t, text)["released"] != false {
		t.Errorf("second release = %s", text)
	}
	text, isErr = routertest.CallText(t, cs, "claim_acquire", map[string]any{"resource": "file:/src/a.go", "agentId": "beta"})
	if isErr || routertest.DecodeJSON[claims.Claim](t, text).AgentID != "beta" {
		t.Errorf("acquire after release = %s", text)
	}
}

func TestMissingArguments(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"claim_acquire", map[string]any{"resource": "", "agentId": "a"}, "Missing required argument: resource"},
		{"claim_acquire", map[string]any{"resource": "r", "agentId": ""}, "Missing required argument: agentId"},
		{"claim_release", map[string]any{"resource": "", "agentId": "a"}, "Missing required argument: resource"},
		{"claim_release", map[string]any{"resource": "r", "agentId": ""}, "Missing required argument: agentId"},
	}
	for _, c := range cases {
		if text, isErr := routertest.CallText(t, cs, c.tool, c.args); !isErr || text != c.want {
			t.Errorf("%s %v = %v %q, want %q", c.tool, c.args, isErr, text, c.want)
		}
	}
	// Absent arguments never reach the handler: the schema rejects them.
	text, isErr := routertest.CallText(t, cs, "claim_acquire", map[string]any{"agentId": "a"})
	if !isErr || !strings.Contains(text, "Invalid arguments for 'claim_acquire'") || !strings.Contains(text, "resource") {
		t.Errorf("absent resource = %q", text)
	}
}

func TestStaleClaimsAreTakenOver(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	home := filepath.Join(h.Dir, "home")
	future := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")

	// Held by a process that has died: taken over at once.
	writeLock(t, home, "dead-owner", claims.Claim{Resource: "dead-owner", AgentID: "ghost", PID: deadPID(t),
		Acquired: time.Now().UTC().Format(time.RFC3339), TTLMs: 3600000, ExpiresAt: future})
	text, isErr := routertest.CallText(t, cs, "claim_acquire", map[string]any{"resource": "dead-owner", "agentId": "heir"})
	if isErr || routertest.DecodeJSON[claims.Claim](t, text).AgentID != "heir" {
		t.Errorf("acquire over a dead owner = %s", text)
	}

	// Expired: taken over, and releasable by anyone.
	text, isErr = routertest.CallText(t, cs, "claim_acquire", map[string]any{"resource": "short", "agentId": "first", "ttlMs": 1})
	if isErr {
		t.Fatal(text)
	}
	routertest.WaitFor(t, "the 1 ms claim to expire", func() bool {
		text, _ := routertest.CallText(t, cs, "claim_list", map[string]any{})
		l := routertest.DecodeJSON[listed](t, text)
		for _, c := range l.Claims {
			if c.Resource == "short" {
				return c.Expired
			}
		}
		return false
	})
	text, isErr = routertest.CallText(t, cs, "claim_acquire", map[string]any{"resource": "short", "agentId": "second"})
	if isErr || routertest.DecodeJSON[claims.Claim](t, text).AgentID != "second" {
		t.Errorf("acquire over an expired claim = %s", text)
	}

	// A corrupt lock file does not block anyone.
	writeLock(t, home, "corrupt", `{"resource": "corr`)
	if text, isErr = routertest.CallText(t, cs, "claim_acquire", map[string]any{"resource": "corrupt", "agentId": "fixer"}); isErr {
		t.Errorf("acquire over a corrupt lock = %s", text)
	}
}

func TestReleaseOfAnExpiredClaimByAnyone(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	past := time.Now().Add(-time.Minute).UTC().Format("2006-01-02T15:04:05.000Z")
	writeLock(t, filepath.Join(h.Dir, "home"), "old", claims.Claim{Resource: "old", AgentID: "owner", PID: os.Getpid(),
		Acquired: past, TTLMs: 1, ExpiresAt: past})
	text, _ := routertest.CallText(t, cs, "claim_release", map[string]any{"resource": "old", "agentId": "someone-else"})
	if routertest.DecodeJSON[map[string]bool](t, text)["released"] != true {
		t.Errorf("release of an expired claim = %s", text)
	}
}

func TestListAndSweep(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	home := filepath.Join(h.Dir, "home")

	text, _ := routertest.CallText(t, cs, "claim_list", map[string]any{})
	if text != "{\n  \"claims\": []\n}" {
		t.Errorf("empty list = %s", text)
	}
	text, _ = routertest.CallText(t, cs, "claim_sweep", map[string]any{})
	if r := routertest.DecodeJSON[map[string]int](t, text); len(r) != 2 || r["swept"] != 0 || r["alive"] != 0 {
		t.Errorf("empty sweep = %s", text)
	}

	if text, isErr := routertest.CallText(t, cs, "claim_acquire", map[string]any{"resource": "live", "agentId": "a"}); isErr {
		t.Fatal(text)
	}
	past := time.Now().Add(-time.Minute).UTC().Format("2006-01-02T15:04:05.000Z")
	future := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
	writeLock(t, home, "expired", claims.Claim{Resource: "expired", AgentID: "b", PID: os.Getpid(), Acquired: past, TTLMs: 1, ExpiresAt: past})
	writeLock(t, home, "orphan", claims.Claim{Resource: "orphan", AgentID: "c", PID: deadPID(t), Acquired: past, TTLMs: 7200000, ExpiresAt: future})
	corrupt := writeLock(t, home, "corrupt", "not json")

	l := routertest.DecodeJSON[listed](t, func() string { s, _ := routertest.CallText(t, cs, "claim_list", map[string]any{}); return s }())
	got := map[string]claims.Status{}
	for _, c := range l.Claims {
		got[c.Resource] = c
	}
	if len(l.Claims) != 3 {
		t.Errorf("list = %+v, want live, expired and orphan (corrupt skipped)", l.Claims)
	}
	if c := got["live"]; c.Expired || c.ProcessDead {
		t.Errorf("live = %+v", c)
	}
	if c := got["expired"]; !c.Expired || c.ProcessDead {
		t.Errorf("expired = %+v", c)
	}
	if c := got["orphan"]; c.Expired || !c.ProcessDead {
		t.Errorf("orphan = %+v", c)
	}

	text, _ = routertest.CallText(t, cs, "claim_sweep", map[string]any{})
	if r := routertest.DecodeJSON[map[string]int](t, text); r["swept"] != 3 || r["alive"] != 1 {
		t.Errorf("sweep = %s, want 3 swept (expired, orphan, corrupt) and 1 alive", text)
	}
	if _, err := os.Stat(corrupt); !os.IsNotExist(err) {
		t.Errorf("corrupt lock survived the sweep: %v", err)
	}
	l = routertest.DecodeJSON[listed](t, func() string { s, _ := routertest.CallText(t, cs, "claim_list", map[string]any{}); return s }())
	if len(l.Claims) != 1 || l.Claims[0].Resource != "live" {
		t.Errorf("after sweep = %+v", l.Claims)
	}
}

func TestClaimsSurviveARestart(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	env := map[string]string{"EVOKORE_HOME": home}
	h1 := routertest.New(t, map[string]any{}, env)
	cs1 := h1.Connect(nil)
	if text, isErr := routertest.CallText(t, cs1, "claim_acquire", map[string]any{"resource": "db:main", "agentId": "keeper", "ttlMs": 600000}); isErr {
		t.Fatal(text)
	}
	_ = cs1.Close()
	h1.Server.Close()

	h2 := routertest.New(t, map[string]any{}, env)
	cs2 := h2.Connect(nil)
	l := routertest.DecodeJSON[listed](t, func() string { s, _ := routertest.CallText(t, cs2, "claim_list", map[string]any{}); return s }())
	if len(l.Claims) != 1 || l.Claims[0].AgentID != "keeper" || l.Claims[0].Expired || l.Claims[0].ProcessDead {
		t.Fatalf("claims after restart = %+v", l.Claims)
	}
	if text, isErr := routertest.CallText(t, cs2, "claim_acquire", map[string]any{"resource": "db:main", "agentId": "intruder"}); !isErr ||
		!strings.HasPrefix(text, "Resource 'db:main' is already claimed by agent 'keeper'") {
		t.Errorf("acquire after restart = %v %q", isErr, text)
	}
}

func TestConcurrentAcquirersInOneRouter(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	const n = 16
	sessions := make([]*mcp.ClientSession, n)
	for i := range sessions {
		sessions[i] = h.Connect(nil)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	winners, held := 0, 0
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res, err := sessions[i].CallTool(context.Background(), &mcp.CallToolParams{Name: "claim_acquire",
				Arguments: map[string]any{"resource": "contended", "agentId": fmt.Sprintf("agent-%d", i)}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Errorf("agent-%d: %v", i, err)
			case !res.IsError:
				winners++
			case strings.HasPrefix(routertest.Text(res), "Resource 'contended' is already claimed by agent 'agent-"):
				held++
			default:
				t.Errorf("agent-%d: %s", i, routertest.Text(res))
			}
		}()
	}
	close(start)
	wg.Wait()
	if winners != 1 || held != n-1 {
		t.Errorf("winners = %d, held = %d; want exactly one winner of %d", winners, held, n)
	}
}

func TestConcurrentAcquirersInSeparateProcesses(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	cmds := make([]*exec.Cmd, n)
	outs := make([]*strings.Builder, n)
	for i := range cmds {
		outs[i] = &strings.Builder{}
		cmds[i] = exec.Command(exe, "-test.run=^$")
		cmds[i].Env = append(os.Environ(), helperEnv+"="+dir)
		cmds[i].Stdout = outs[i]
		cmds[i].Stderr = os.Stderr
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "start"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	won := 0
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("helper %d: %v: %s", i, err, outs[i])
		}
		switch strings.TrimSpace(outs[i].String()) {
		case "won":
			won++
		case "held":
		default:
			t.Errorf("helper %d said %q", i, outs[i])
		}
	}
	if won != 1 {
		t.Errorf("%d processes won the claim; want exactly 1", won)
	}
}
