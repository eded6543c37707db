package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// refusalRig is one router, over raw stdio or streamable HTTP, with four
// fixture children, one per way the pipeline refuses a call before it
// runs: "deny" (permissions.yml denies deny_count), "appr" (appr_count
// needs approval), "rate" (one count a minute) and "cool" (a failed call
// puts the same call in cooldown). Natives get the same rules where they
// apply: get_telemetry is denied and reset_telemetry needs approval.
type refusalRig struct {
	dir  string
	env  []string
	call func(t *testing.T, tool, args string) string
}

func newRefusalRig(t *testing.T) *refusalRig {
	t.Helper()
	dir := t.TempDir()
	fx := testutil.FixtureServer(t)
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"deny": map[string]any{"command": fx},
		"appr": map[string]any{"command": fx},
		"rate": map[string]any{"command": fx, "rateLimit": map[string]any{"requestsPerMinute": 600, "toolLimits": map[string]any{"count": 1}}},
		"cool": map[string]any{"command": fx, "cooldownMs": 60000},
	}})
	perms := testutil.WriteFile(t, dir, "permissions.yml", "rules:\n"+
		"  deny_count: deny\n  get_telemetry: deny\n"+
		"  appr_count: require_approval\n  reset_telemetry: require_approval\n")
	return &refusalRig{dir: dir, env: []string{
		"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"),
		"EVOKORE_TOOL_DISCOVERY_MODE=legacy", "EVOKORE_PERMISSIONS_PATH=" + perms,
		"EVOKORE_TELEMETRY=true",
	}}
}

// answer is a call's answer as the client sees it, the tool's own name
// and any approval id replaced, so that two tools' refusals compare.
var approvalIDs = regexp.MustCompile(`[0-9a-f]{16}`)

func normalise(answer, tool string) string {
	return approvalIDs.ReplaceAllString(strings.ReplaceAll(answer, tool, "<tool>"), "<id>")
}

// counts reads how many calls of count and fail each child ran.
func (r *refusalRig) counts(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, srv := range []string{"deny", "appr", "rate", "cool"} {
		out[srv] = r.call(t, srv+"_read_count", `{}`)
	}
	return out
}

// checkRefusals runs every refusal through r and checks each against
// the native refusal of the same kind and the children's counts. Every
// check fails at once: a proxied call that slips past a stage runs on
// its child and answers, it does not hang.
func checkRefusals(t *testing.T, r *refusalRig) {
	before := r.counts(t)
	for srv, c := range before {
		if !strings.Contains(c, "calls: 0") {
			t.Fatalf("%s counted a call before the test made one: %s", srv, c)
		}
	}

	// Denied: the proxied refusal is the native one.
	native := normalise(r.call(t, "get_telemetry", `{}`), "get_telemetry")
	if proxied := normalise(r.call(t, "deny_count", `{}`), "deny_count"); proxied != native || !strings.Contains(native, "denied") {
		t.Errorf("denied:\nproxied %s\nnative  %s", proxied, native)
	}

	// Needs approval: held with an approval id, exactly as a native.
	native = normalise(r.call(t, "reset_telemetry", `{}`), "reset_telemetry")
	if proxied := normalise(r.call(t, "appr_count", `{}`), "appr_count"); proxied != native || !strings.Contains(native, "<id>") {
		t.Errorf("needs approval:\nproxied %s\nnative  %s", proxied, native)
	}

	// Rate limited: the bucket holds one call; the second is refused.
	if first := r.call(t, "rate_count", `{}`); !strings.Contains(first, "calls: 1") {
		t.Fatalf("the first rate-limited call: %s", first)
	}
	if second := r.call(t, "rate_count", `{}`); !strings.Contains(second, "Rate limit exceeded for rate/count") {
		t.Errorf("the second call within the limit: %s", second)
	}

	// In cooldown: a failure puts the same call in cooldown.
	if first := r.call(t, "cool_fail", `{"message":"x"}`); !strings.Contains(first, "failed: x") {
		t.Fatalf("the failing call: %s", first)
	}
	if again := r.call(t, "cool_fail", `{"message":"x"}`); !strings.Contains(again, "[EVOKORE COOLDOWN] Tool 'cool_fail' is currently on cooldown") {
		t.Errorf("the same call after its failure: %s", again)
	}

	want := map[string]string{"deny": "calls: 0", "appr": "calls: 0", "rate": "calls: 1", "cool": "calls: 1"}
	for srv, c := range r.counts(t) {
		if !strings.Contains(c, want[srv]) {
			t.Errorf("child %s: %s, want %s: a refused call ran", srv, c, want[srv])
		}
	}
}

// A proxied call refused by the pipeline (denied, held for approval,
// rate limited, in cooldown) over raw stdio, where proxied calls keep
// their arguments and results as bytes, is refused exactly as a native
// call is, and never reaches its child.
func TestProxiedRefusalsOverStdioAreTheNativeOnes(t *testing.T) {
	r := newRefusalRig(t)
	cmd := exec.Command(testutil.Evokore(t), "serve")
	cmd.Dir, cmd.Env = r.dir, r.env
	fr := &fastRouter{cmd: cmd}
	fr.stdin, fr.lines, fr.stderr = routertest.StartLines(t, cmd, 64)
	fr.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"refusals","version":"1"}}}`)
	fr.response(t)
	fr.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	next := 0
	r.call = func(t *testing.T, tool, args string) string {
		t.Helper()
		next++
		m := fr.call(t, itoa(next), tool, args)
		delete(m, "id")
		delete(m, "jsonrpc")
		b, _ := json.Marshal(m)
		return string(b)
	}
	waitListed(t, r, "cool_read_count")
	checkRefusals(t, r)
}

// The same over streamable HTTP, through the go-sdk client.
func TestProxiedRefusalsOverHTTPAreTheNativeOnes(t *testing.T) {
	r := newRefusalRig(t)
	cmd := exec.Command(testutil.Evokore(t), "serve", "--http", "127.0.0.1:0")
	cmd.Dir, cmd.Env = r.dir, r.env
	base, _ := startHTTP(t, cmd)
	cs, err := connectWith(t, base+"/mcp", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.call = func(t *testing.T, tool, args string) string {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
		var b []byte
		if err != nil {
			b, _ = json.Marshal(map[string]string{"error": err.Error()})
		} else {
			b, _ = json.Marshal(map[string]any{"result": res})
		}
		return string(b)
	}
	waitListed(t, r, "cool_read_count")
	checkRefusals(t, r)
}

// waitListed waits until tool answers: its child has booted.
func waitListed(t *testing.T, r *refusalRig, tool string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if got := r.call(t, tool, `{}`); strings.Contains(got, "calls:") {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("%s never answered: %s", tool, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
