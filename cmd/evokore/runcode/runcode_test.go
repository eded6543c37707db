// Package runcode_test drives run_code through a router and its
// children, as a client sees it. It is a package of its own, beside
// cmd/evokore's tests, so that the two run side by side: its programs
// move hundreds of megabytes through a race-instrumented router.
package runcode_test

import (
	"bufio"
	"context"
	"encoding/json"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/native/codemode"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/server"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// codeRun is run_code's answer.
type codeRun struct {
	Run   string          `json:"run"`
	Value json.RawMessage `json:"value"`
	Log   []string        `json:"log"`
	// Dropped is logLinesDropped.
	Dropped int    `json:"logLinesDropped"`
	Calls   int    `json:"calls"`
	Error   string `json:"error"`
}

func runCode(t *testing.T, cs *mcp.ClientSession, code string) (codeRun, bool) {
	t.Helper()
	if !codemode.Supported {
		t.Skip("run_code bounds memory on Linux only")
	}
	res := routertest.Call(t, cs, "run_code", map[string]any{"code": code})
	var r codeRun
	if err := json.Unmarshal([]byte(routertest.Text(res)), &r); err != nil {
		t.Fatalf("run_code answered %q: %v", routertest.Text(res), err)
	}
	return r, res.IsError
}

// codeRig is a router with two fixture children, "alpha" and "beta", and
// permissions.yml rules written by the test.
func codeRig(t *testing.T, rules string, env map[string]string) (*routertest.Harness, *mcp.ClientSession) {
	t.Helper()
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"alpha": routertest.Fixture(t), "beta": routertest.Fixture(t)}})
	if rules != "" {
		testutil.WriteFile(t, dir, "permissions.yml", "rules:\n"+rules)
	}
	h := routertest.NewWithServerOptions(t, dir, cfg, env, func(o *server.Options) { o.CodeSandbox = routertest.CodeSandbox(t) })
	cs := h.Connect(nil)
	h.Booted()
	return h, cs
}

// logLines reads the JSON lines of path.
func logLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// toolsOfRun lists, in order, the tools of the lines whose run field is
// run, under key (the audit log's resource, replay's tool).
func toolsOfRun(lines []map[string]any, runKey, run, toolKey string) []string {
	var out []string
	for _, l := range lines {
		if l[runKey] == run {
			out = append(out, l[toolKey].(string))
		}
	}
	return out
}

// A program calls two proxied tools, of two children, and a native; it
// gets their results, logs, and returns a value. The audit log and the
// session replay show each inner call under the run, and the run itself.
func TestRunCodeCallsProxiedAndNativeTools(t *testing.T) {
	h, cs := codeRig(t, "", nil)
	r, isErr := runCode(t, cs, `
		const a = await tools.alpha_echo({message: "one"});
		const b = await tools.call("beta_count", {});
		const status = await tools.proxy_server_status({});
		console.log("alpha said", a[0].text);
		const servers = JSON.parse(status[0].text).servers.map(s => s.id).sort();
		return {a: a[0].text, b: b[0].text, servers};`)
	if isErr || r.Error != "" {
		t.Fatalf("run failed: %+v", r)
	}
	if got := string(r.Value); got != `{"a":"Echo: one","b":"calls: 1","servers":["alpha","beta"]}` {
		t.Errorf("value = %s", got)
	}
	if len(r.Log) != 1 || r.Log[0] != "alpha said Echo: one" || r.Calls != 3 {
		t.Errorf("log %q, calls %d", r.Log, r.Calls)
	}
	if got := routertest.Text(routertest.Call(t, cs, "beta_read_count", map[string]any{})); got != "calls: 1" {
		t.Errorf("beta counted %s", got)
	}

	want := []string{"alpha_echo", "beta_count", "proxy_server_status", "run_code"}
	home := filepath.Join(h.Dir, "home")
	routertest.WaitFor(t, "the audit log and replay of the run", func() bool {
		audit := toolsOfRun(logLines(t, filepath.Join(home, "audit", "audit.jsonl")), "runId", r.Run, "resource")
		var replay []string
		files, _ := filepath.Glob(filepath.Join(home, "sessions", "*-replay.jsonl"))
		for _, f := range files {
			replay = append(replay, toolsOfRun(logLines(t, f), "run_id", r.Run, "tool")...)
		}
		return strings.Join(audit, ",") == strings.Join(want, ",") && strings.Join(replay, ",") == strings.Join(want, ",")
	})
}

// refusal is what the model's own call of name answers: the JSON-RPC
// error's message, or the result's text.
func refusal(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return strings.TrimPrefix(err.Error(), `calling "tools/call": `)
	}
	return routertest.Text(res)
}

// A program cannot start another program: its bounds would multiply.
func TestRunCodeCannotNest(t *testing.T) {
	_, cs := codeRig(t, "", nil)
	r, _ := runCode(t, cs, `try { await tools.run_code({code: "return 1"}); return "nested"; } catch (e) { return e.message; }`)
	if !strings.Contains(string(r.Value), "cannot be called from a run_code program") {
		t.Errorf("nested run_code: %+v", r)
	}
}

// An inner call the role denies is refused inside the program, in the
// words the model would get, and never reaches its child.
func TestRunCodeInnerCallDeniedByRBAC(t *testing.T) {
	_, cs := codeRig(t, "  alpha_count: deny\n", nil)
	direct := refusal(t, cs, "alpha_count", map[string]any{})
	r, isErr := runCode(t, cs, `
		try { await tools.alpha_count({}); return "ran"; } catch (e) { return e.message; }`)
	if isErr || r.Error != "" {
		t.Fatalf("run failed: %+v", r)
	}
	var caught string
	_ = json.Unmarshal(r.Value, &caught)
	if !strings.Contains(caught, "denied") || !strings.Contains(direct, "denied") {
		t.Errorf("inside the program %q; the model's own call %q", caught, direct)
	}
	if got := routertest.Text(routertest.Call(t, cs, "alpha_read_count", map[string]any{})); got != "calls: 0" {
		t.Errorf("the denied call ran: alpha counted %s", got)
	}
}

// A program's inner calls are bound by the rate limits and cooldowns of
// the model's own calls, on the same buckets and table: a tool allowed
// once a minute runs once in a program that calls it twice, a failed call
// made again in the program is in cooldown, and after the run the model's
// own calls find the bucket spent and the call cooling.
func TestRunCodeInnerCallsAreRateLimitedAndCoolDown(t *testing.T) {
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"rate": mergeMaps(routertest.Fixture(t), map[string]any{"rateLimit": map[string]any{"requestsPerMinute": 600, "toolLimits": map[string]any{"count": 1}}}),
		"cool": mergeMaps(routertest.Fixture(t), map[string]any{"cooldownMs": 60000}),
	}})
	h := routertest.NewWithConfig(t, dir, cfg, nil)
	cs := h.Connect(nil)
	h.Booted()
	r, isErr := runCode(t, cs, `
		const out = [];
		const call = async (name, args) => {
			try { const res = await tools.call(name, args); out.push(res[0].text); } catch (e) { out.push(e.message); }
		};
		await call("rate_count", {});
		await call("rate_count", {});
		await call("cool_fail", {message: "x"});
		await call("cool_fail", {message: "x"});
		return out;`)
	if isErr || r.Error != "" {
		t.Fatalf("run failed: %+v", r)
	}
	var got []string
	_ = json.Unmarshal(r.Value, &got)
	want := []string{"calls: 1", "Rate limit exceeded for rate/count", "failed: x", "[EVOKORE COOLDOWN] Tool 'cool_fail' is currently on cooldown"}
	if len(got) != len(want) {
		t.Fatalf("the program saw %q", got)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("inner call %d: %q, want %q", i+1, got[i], want[i])
		}
	}
	if own := refusal(t, cs, "rate_count", map[string]any{}); !strings.Contains(own, "Rate limit exceeded for rate/count") {
		t.Errorf("the model's own call after the run: %s", own)
	}
	if own := refusal(t, cs, "cool_fail", map[string]any{"message": "x"}); !strings.Contains(own, "currently on cooldown") {
		t.Errorf("the model's own failed call after the run: %s", own)
	}
	for _, srv := range []string{"rate", "cool"} {
		if got := routertest.Text(routertest.Call(t, cs, srv+"_read_count", map[string]any{})); got != "calls: 1" {
			t.Errorf("%s ran %s, want the one call the limits let through", srv, got)
		}
	}
}

// mergeMaps is a with b's keys set over it.
func mergeMaps(a, b map[string]any) map[string]any {
	maps.Copy(a, b)
	return a
}

// An inner call that needs approval holds the program; an operator
// approves it out of band and the program resumes, the call running once.
func TestRunCodeInnerCallWaitsForApproval(t *testing.T) {
	h, cs := codeRig(t, "  alpha_count: require_approval\n", nil)
	runHeldForApproval(t, h, cs)
}

// runHeldForApproval runs a program whose call of alpha_count needs
// approval on cs, waits until the call is held, checks it has not run,
// approves it as an operator and checks the program's answer and that
// the call ran once.
func runHeldForApproval(t *testing.T, h *routertest.Harness, cs *mcp.ClientSession) {
	t.Helper()
	home := filepath.Join(h.Dir, "home")
	type ran struct {
		r     codeRun
		isErr bool
	}
	done := make(chan ran, 1)
	go func() {
		r, isErr := runCode(t, cs, `const r = await tools.alpha_count({}); return r[0].text;`)
		done <- ran{r, isErr}
	}()
	var id string
	routertest.WaitFor(t, "the inner call to be held for approval", func() bool {
		select {
		case out := <-done:
			t.Fatalf("the run ended before any approval: %+v", out.r)
		default:
		}
		pending, err := policy.ListPending(home, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pending {
			if p.ToolName == "alpha_count" {
				id = p.ID
				return true
			}
		}
		return false
	})
	if got := routertest.Text(routertest.Call(t, cs, "alpha_read_count", map[string]any{})); got != "calls: 0" {
		t.Fatalf("the held call ran before approval: %s", got)
	}
	h.Approve(id)
	out := <-done
	if out.isErr || string(out.r.Value) != `"calls: 1"` {
		t.Fatalf("after approval the run answered %+v", out.r)
	}
	if got := routertest.Text(routertest.Call(t, cs, "alpha_read_count", map[string]any{})); got != "calls: 1" {
		t.Errorf("alpha counted %s, want the approved call once", got)
	}
}

// A wall time set past the router's bound on a native call ends before
// it, so a run held for approval answers with its own error, naming its
// bound, not the router's generic one.
func TestRunCodeWallTimeStaysWithinTheRequestTimeout(t *testing.T) {
	_, cs := codeRig(t, "  alpha_count: require_approval\n",
		map[string]string{"EVOKORE_PROXY_REQUEST_TIMEOUT_MS": "3000", "EVOKORE_CODE_TIMEOUT_MS": "60000"})
	r, isErr := runCode(t, cs, `await tools.alpha_count({}); return "approved";`)
	if !isErr || !strings.Contains(r.Error, "wall time of 2s ended") {
		t.Errorf("the held run answered %+v, want its wall time, a second inside the request timeout", r)
	}
}

// A program whose call waits for approval when its time runs out tells
// the model what it waits for and who decides it (the tool, the approval
// id, the user or an operator), not only that its program was slow, and
// nothing of how to approve. The approval stays pending, and the same
// call runs once approved.
func TestRunCodeHeldPastItsWallTimeSaysWhatItWaitsFor(t *testing.T) {
	h, cs := codeRig(t, "  alpha_count: require_approval\n", map[string]string{"EVOKORE_CODE_TIMEOUT_MS": "1500"})
	r, isErr := runCode(t, cs, `const c = await tools.alpha_count({}); return c[0].text;`)
	pending, err := policy.ListPending(filepath.Join(h.Dir, "home"), time.Now())
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending approvals: %+v %v", pending, err)
	}
	id := pending[0].ID
	want := "the program was waiting for approval when its wall time of 1.5s ended: 'alpha_count' (approval id " + id +
		") waiting for the user or an operator, who decide outside this conversation. It did not run; the approval stays pending, " +
		"and once it is approved the same call runs once."
	if !isErr || r.Error != want {
		t.Errorf("the run answered %q, want %q", r.Error, want)
	}
	for _, how := range []string{"evokore", "dashboard", "approvals approve", "/api/", "operator.key", "token"} {
		if strings.Contains(strings.ToLower(r.Error), how) {
			t.Errorf("the answer says how to approve (%q): %s", how, r.Error)
		}
	}
	h.Approve(id)
	if r, isErr := runCode(t, cs, `const c = await tools.alpha_count({}); return c[0].text;`); isErr || string(r.Value) != `"calls: 1"` {
		t.Errorf("the same call after approval: %+v", r)
	}
}

// A sessionless (2026-07-28) client that can elicit cannot be sent an
// elicitation in the middle of its request, nor answer input_required in
// the middle of a run: its program's call that needs approval waits for
// the operator, as any client's that cannot elicit.
func TestRunCodeInnerCallOfASessionlessClientWaitsForApproval(t *testing.T) {
	h, _ := codeRig(t, "  alpha_count: require_approval\n", nil)
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)
	asked := make(chan struct{}, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "sessionless", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- struct{}{}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if cs.InitializeResult().ProtocolVersion != "2026-07-28" {
		t.Fatalf("protocol %q, want 2026-07-28", cs.InitializeResult().ProtocolVersion)
	}
	runHeldForApproval(t, h, cs)
	select {
	case <-asked:
		t.Error("the client was sent an elicitation")
	default:
	}
}

// A tool held because its child changed its definition is refused inside
// a program as it is to the model.
func TestRunCodePinnedChangedToolRefused(t *testing.T) {
	_, cs := codeRig(t, "", nil)
	routertest.Call(t, cs, "alpha_echo", map[string]any{"message": "pinned"})
	routertest.Call(t, cs, "alpha_mutate", map[string]any{"description": "Changed behind your back."})
	var direct string
	routertest.WaitFor(t, "the changed alpha_echo to be held", func() bool {
		direct = refusal(t, cs, "alpha_echo", map[string]any{"message": "x"})
		return direct != "Echo: x"
	})
	r, _ := runCode(t, cs, `
		try { const r = await tools.alpha_echo({message: "x"}); return r[0].text; } catch (e) { return e.message; }`)
	var caught string
	_ = json.Unmarshal(r.Value, &caught)
	if caught == "Echo: x" || !strings.Contains(caught, direct) {
		t.Errorf("inside the program %q; the model's own call %q", caught, direct)
	}
}

// A runaway loop, a huge allocation and a 10,000-call loop each end their
// run with an error naming the bound, while another session keeps being
// served throughout; the call loop's calls past the cap never run.
func TestRunCodeBoundsStopRunawaysNotTheRouter(t *testing.T) {
	_, cs := codeRig(t, "", map[string]string{"EVOKORE_CODE_CPU_MS": "1000", "EVOKORE_CODE_MEMORY_MB": "128", "EVOKORE_CODE_MAX_CALLS": "100"})
	h2 := cs // the runaways' session
	_, other := codeRig(t, "", nil)
	for _, tc := range []struct{ name, code, want string }{
		{"loop", `while (true) {}`, "CPU time"},
		{"allocation", `let s = "x"; while (true) { s = s + s; }`, "out of memory"},
		{"calls", `for (let i = 0; i < 10000; i++) { await tools.beta_count({}); } return "done";`, "more than 100 tool calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type ran struct {
				r     codeRun
				isErr bool
			}
			done := make(chan ran, 1)
			go func() {
				r, isErr := runCode(t, h2, tc.code)
				done <- ran{r, isErr}
			}()
			served := 0
			for finished := false; !finished; {
				if got := routertest.Text(routertest.Call(t, other, "alpha_echo", map[string]any{"message": "still here"})); got != "Echo: still here" {
					t.Fatalf("the other session got %q", got)
				}
				served++
				select {
				case out := <-done:
					finished = true
					if !out.isErr || !strings.Contains(out.r.Error, tc.want) {
						t.Errorf("the run answered %+v, want an error saying %q", out.r, tc.want)
					}
				default:
				}
			}
			t.Logf("the other session was served %d times during the run", served)
		})
	}
	if got := routertest.Text(routertest.Call(t, h2, "beta_read_count", map[string]any{})); got != "calls: 100" {
		t.Errorf("beta counted %s, want the 100 calls under the cap", got)
	}
	// The router still serves the runaways' own session too.
	if r, isErr := runCode(t, h2, `return 1 + 1;`); isErr || string(r.Value) != "2" {
		t.Errorf("a run after the runaways: %+v", r)
	}
}

// An error the program writes is bounded like its value and its log: a
// thrown 15 MiB message, or one a getter throws while the value is
// turned into JSON, reaches the model cut to the output bound, saying
// how long it was, and not whole.
func TestRunCodeErrorIsCutToTheOutputBound(t *testing.T) {
	_, cs := codeRig(t, "", map[string]string{"EVOKORE_CODE_MAX_OUTPUT_BYTES": "1024"})
	for _, code := range []string{
		`throw new Error("E".repeat(15 << 20));`,
		`throw "é".repeat(1 << 20);`,
		`return {get x() { throw new Error("b".repeat(8 << 20)); }};`,
	} {
		res := routertest.Call(t, cs, "run_code", map[string]any{"code": code})
		text := routertest.Text(res)
		if !res.IsError || len(text) > 2048 {
			t.Errorf("%s: answered %d bytes (isError %v), want an error within the 1 KiB bound", code, len(text), res.IsError)
			continue
		}
		var r codeRun
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			t.Fatalf("%s: answered %q: %v", code, text, err)
		}
		if !strings.Contains(r.Error, "(cut from ") {
			t.Errorf("%s: error %q does not say it was cut", code, r.Error)
		}
	}
}

// A program cannot make the router hold its arguments in bulk: calls
// fired without awaiting while every slot is taken wait for one, and
// each would hold its (up to 16 MiB) arguments in the router, past the
// sandbox's memory bound. The router reads no further call once the
// waiting ones hold a frame's worth, so the program waits instead, and
// every call still runs in turn.
func TestRunCodeQueuedCallsDoNotGrowTheRouter(t *testing.T) {
	// The sandbox's own memory is not what is measured: its frames and
	// their copies near the default 256 MiB. The router moves 120 MiB of
	// arguments, which under -race takes half a minute of CPU: the run
	// and the call it is get the time for it.
	_, cs := codeRig(t, "", map[string]string{"EVOKORE_CODE_CPU_MS": raceScaled(10000), "EVOKORE_CODE_TIMEOUT_MS": raceScaled(40000),
		"EVOKORE_PROXY_REQUEST_TIMEOUT_MS": raceScaled(41000), "EVOKORE_CODE_MEMORY_MB": "1024"})
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
		}
	}()
	r, isErr := runCode(t, cs, `
		const held = [];
		for (let i = 0; i < 4; i++) held.push(tools.alpha_slow({ms: 6000}));
		const pad = "z".repeat(4 << 20);
		const queued = [];
		for (let i = 0; i < 30; i++) queued.push(tools.no_such_tool({pad}));
		await Promise.all(held);
		const settled = await Promise.allSettled(queued);
		return settled.filter(s => s.status === "rejected").length;`)
	close(stop)
	<-sampled
	if isErr || string(r.Value) != "30" {
		t.Errorf("the run answered %+v, want its 30 queued calls run (each refused: no such tool)", r)
	}
	t.Logf("the router's heap peaked at %d MiB", peak.Load()>>20)
	if p := peak.Load(); p > 128<<20 {
		t.Errorf("the router's heap reached %d MiB while the program's calls waited for a slot", p>>20)
	}
}

// The log's bound counts what a line takes in the answer: empty lines,
// or lines of control characters (six bytes each as JSON), cannot carry
// the log past it.
func TestRunCodeLogIsBoundedAsTheAnswerCarriesIt(t *testing.T) {
	_, cs := codeRig(t, "", map[string]string{"EVOKORE_CODE_MAX_OUTPUT_BYTES": "1024"})
	for _, code := range []string{
		`for (let i = 0; i < 100000; i++) console.log(""); return 1;`,
		`for (let i = 0; i < 1000; i++) console.log("\x01".repeat(100)); return 1;`,
	} {
		res := routertest.Call(t, cs, "run_code", map[string]any{"code": code})
		text := routertest.Text(res)
		var r codeRun
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			t.Fatalf("%s: answered %.200q: %v", code, text, err)
		}
		if res.IsError || string(r.Value) != "1" {
			t.Fatalf("%s: the run answered %.200q", code, text)
		}
		log, _ := json.Marshal(r.Log)
		if len(log) > 1024 || r.Dropped == 0 {
			t.Errorf("%s: the answer's log takes %d bytes, %d lines dropped; want at most the 1 KiB bound, the rest counted", code, len(log), r.Dropped)
		}
	}
}

// Parallel calls with large arguments and large results all finish: the
// router stops reading a program's calls while those waiting for a slot
// hold 16 MiB, and a call's reply, written while it holds its slot, must
// not wait for the program to read it meanwhile (the sandbox reads
// replies as they come), or the run hangs to its wall time.
func TestRunCodeParallelLargeCallsFinish(t *testing.T) {
	// 36 MiB of results in the sandbox, and their copies, near the
	// default 256 MiB, which is not what is tested here; the router moves
	// them twice, which under -race takes its time.
	_, cs := codeRig(t, "", map[string]string{"EVOKORE_CODE_CPU_MS": raceScaled(5000), "EVOKORE_CODE_TIMEOUT_MS": raceScaled(30000),
		"EVOKORE_PROXY_REQUEST_TIMEOUT_MS": raceScaled(31000), "EVOKORE_CODE_MEMORY_MB": "1024"})
	r, isErr := runCode(t, cs, `
		const big = "z".repeat(3 << 20);
		const calls = [];
		for (let i = 0; i < 12; i++) calls.push(tools.alpha_echo({message: big}));
		const results = await Promise.all(calls);
		return results.filter(r => r[0].text === "Echo: " + big).length;`)
	if isErr || string(r.Value) != "12" {
		t.Errorf("the run answered %+v, want its 12 calls' results", r)
	}
}

// One session runs at most two programs at once: a model firing many
// run_code calls together (each a sandbox of up to the memory bound and
// its CPU time) gets the others refused at once, saying why, rather than
// multiplying the bounds of a run; once its programs end it runs again.
func TestRunCodeASessionRunsTwoProgramsAtOnce(t *testing.T) {
	_, cs := codeRig(t, "", map[string]string{"EVOKORE_CODE_CPU_MS": "1500"})
	if !codemode.Supported {
		t.Skip("run_code bounds memory on Linux only")
	}
	const fired = 5
	type ran struct {
		text  string
		isErr bool
	}
	done := make(chan ran, fired)
	for range fired {
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `while (true) {}`}})
			if err != nil {
				done <- ran{err.Error(), true}
				return
			}
			done <- ran{routertest.Text(res), res.IsError}
		}()
	}
	spun, refused := 0, 0
	for range fired {
		out := <-done
		switch {
		case strings.Contains(out.text, "CPU time"):
			spun++
		case out.isErr && strings.Contains(out.text, "runs at most 2 programs at once"):
			refused++
		default:
			t.Errorf("a run answered %q", out.text)
		}
	}
	if spun != 2 || refused != fired-2 {
		t.Errorf("%d programs ran and %d were refused, want 2 and %d", spun, refused, fired-2)
	}
	if r, isErr := runCode(t, cs, `return 1;`); isErr || string(r.Value) != "1" {
		t.Errorf("a run after the others ended: %+v", r)
	}
}

// run_code's two programs at once are a caller's: a subject's sessions
// share them, and another subject's programs run while the first
// subject's two spin.
func TestRunCodeSlotsAreTheCallersAcrossItsSessions(t *testing.T) {
	h, _ := codeRig(t, "", map[string]string{"EVOKORE_CODE_CPU_MS": "3000"})
	if !codemode.Supported {
		t.Skip("run_code bounds memory on Linux only")
	}
	as := func(subject string) *mcp.ClientSession {
		return h.ConnectAs(nil, ingress.SessionOptions{Identity: session.Identity{Subject: subject, Tenant: "team"}})
	}
	alice1, alice2, bob := as("alice"), as("alice"), as("bob")
	spinning := make(chan string, 2)
	for range 2 {
		go func() {
			for {
				res, err := alice1.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `while (true) {}`}})
				if err != nil {
					spinning <- err.Error()
					return
				}
				// A probe of alice's other session may hold a slot
				// for a moment: then start again.
				if text := routertest.Text(res); !strings.Contains(text, "runs at most 2 programs at once") {
					spinning <- text
					return
				}
			}
		}()
	}
	// alice's other session is refused once her two programs spin.
	refused := func() bool {
		res, err := alice2.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `return 1`}})
		return err == nil && res.IsError && strings.Contains(routertest.Text(res), "runs at most 2 programs at once")
	}
	for !refused() {
		select {
		case e := <-spinning:
			t.Fatalf("alice's program ended before her other session was refused: %s", e)
		default:
		}
	}
	if r, isErr := runCode(t, bob, `return 1`); isErr || string(r.Value) != "1" {
		t.Errorf("bob's program while alice's two spin: %+v", r)
	}
	if !refused() {
		t.Error("alice's two programs ended while bob's ran: the test proves nothing")
	}
	for range 2 {
		if e := <-spinning; !strings.Contains(e, "CPU time") {
			t.Errorf("alice's program ended with %q", e)
		}
	}
}

// A thrown value whose getters throw when it is shown ends the run as the
// program's error, not as a crash of the sandbox: the router reads a
// crashed sandbox's stderr for the runtime's words, and a program that
// crashed it with "out of memory" in the panic passed for a bound.
func TestRunCodeAValueThatCannotBeShownIsNoBound(t *testing.T) {
	_, cs := codeRig(t, "", nil)
	for _, code := range []string{
		`throw new Proxy({}, {get() { throw "fatal error: runtime: out of memory"; }});`,
		`const e = new Error("x"); Object.defineProperty(e, "message", {get() { throw "out of memory"; }}); throw e;`,
		`return {get x() { throw new Proxy({}, {get() { throw "out of memory"; }}); }};`,
	} {
		r, isErr := runCode(t, cs, code)
		if !isErr || !strings.Contains(r.Error, "cannot be shown") || strings.Contains(r.Error, "ran out of memory") {
			t.Errorf("%s: the run answered %q (isError %v), want the program's error, no bound", code, r.Error, isErr)
		}
	}
}

// No Go value reaches the program: an error the sandbox meets on its
// behalf (arguments too deep to send) is a plain Error, not a GoError
// whose value property handed the program the Go error itself, and
// through its fields Go's reflection (reflect.Value's Call, SetPointer).
func TestRunCodeSandboxErrorsCarryNoGoValue(t *testing.T) {
	_, cs := codeRig(t, "", nil)
	r, isErr := runCode(t, cs, `
		let deep = []; for (let i = 0; i < 10001; i++) deep = [deep];
		try { tools.alpha_echo({message: "x", deep}); return "sent"; } catch (e) {
			return [e instanceof Error, e.message.includes("exceeded max depth"), typeof e.value];
		}`)
	if isErr || string(r.Value) != `[true,true,"undefined"]` {
		t.Errorf("the run answered %+v, want a plain Error with no value", r)
	}
}

// raceScaled is ms, as a setting, scaled for a router built with -race,
// whose sandbox moves megabytes of JSON several times slower: the tests
// that use it bound memory or waiting, not CPU.
func raceScaled(ms int) string {
	if testutil.Race {
		ms *= 6
	}
	return strconv.Itoa(ms)
}

// sandboxCount is how many run_code sandboxes this process runs now.
func sandboxCount() int {
	lists, _ := filepath.Glob("/proc/self/task/*/children")
	n := 0
	for _, l := range lists {
		b, _ := os.ReadFile(l)
		for _, pid := range strings.Fields(string(b)) {
			if cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline"); strings.Contains(string(cmdline), codemode.SandboxArg) {
				n++
			}
		}
	}
	return n
}

// The router runs at most EVOKORE_CODE_TOTAL_MEMORY_MB of sandboxes at
// once, however many sessions run programs (12 sessions used to hold 12
// sandboxes, 1.4 GB): here two of 64 MiB in 128 MiB. Five sessions each
// run a program held for approval: two sandboxes start and hold, the
// other programs wait for a sandbox rather than fail, and as approvals
// let programs finish, the waiting ones start; every program answers.
func TestRunCodeRouterRunsAtMostItsSandboxMemory(t *testing.T) {
	h, _ := codeRig(t, "  alpha_count: require_approval\n", map[string]string{
		"EVOKORE_CODE_MEMORY_MB": "64", "EVOKORE_CODE_TOTAL_MEMORY_MB": "128", "EVOKORE_CODE_TIMEOUT_MS": "120000"})
	if !codemode.Supported {
		t.Skip("run_code bounds memory on Linux only")
	}
	home := filepath.Join(h.Dir, "home")
	const sessions = 5
	done := make(chan string, sessions)
	for range sessions {
		cs := h.Connect(nil)
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code",
				Arguments: map[string]any{"code": `const c = await tools.alpha_count({}); return "ran";`}})
			switch {
			case err != nil:
				done <- err.Error()
			default:
				done <- routertest.Text(res)
			}
		}()
	}
	approved := map[string]bool{}
	most := 0
	for answered := 0; answered < sessions; {
		select {
		case text := <-done:
			if !strings.Contains(text, `"value":"ran"`) {
				t.Errorf("a program answered %s", text)
			}
			answered++
			continue
		default:
		}
		most = max(most, sandboxCount())
		pending, err := policy.ListPending(home, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		waiting := 0
		for _, p := range pending {
			if p.State == policy.StatePending && !approved[p.ID] {
				waiting++
			}
		}
		// Only a running program asks for approval: two at most wait.
		if waiting > 2 {
			t.Fatalf("%d programs hold sandboxes waiting for approval at once, want 2 at most", waiting)
		}
		if waiting == 2 || waiting > 0 && len(approved)+waiting == sessions {
			for _, p := range pending {
				if p.State == policy.StatePending && !approved[p.ID] {
					approved[p.ID] = true
					h.Approve(p.ID)
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if most > 2 {
		t.Errorf("%d sandboxes ran at once, want 2 at most", most)
	}
	if got := routertest.Text(routertest.Call(t, h.Connect(nil), "alpha_read_count", map[string]any{})); got != "calls: 5" {
		t.Errorf("alpha counted %s, want each program's call once", got)
	}
}

// A program that finds every sandbox busy for as long as it may wait (a
// quarter of its wall time) is told it did not start and why, naming the
// setting; one program's memory past the total is refused at once,
// naming both settings.
func TestRunCodeWaitingForASandboxNamesTheSetting(t *testing.T) {
	h, held := codeRig(t, "  alpha_count: require_approval\n", map[string]string{
		"EVOKORE_CODE_MEMORY_MB": "64", "EVOKORE_CODE_TOTAL_MEMORY_MB": "64", "EVOKORE_CODE_TIMEOUT_MS": "8000"})
	if !codemode.Supported {
		t.Skip("run_code bounds memory on Linux only")
	}
	first := make(chan codeRun, 1)
	go func() {
		r, _ := runCode(t, held, `await tools.alpha_count({}); return "ran";`)
		first <- r
	}()
	routertest.WaitFor(t, "the first program to hold the one sandbox", func() bool {
		pending, _ := policy.ListPending(filepath.Join(h.Dir, "home"), time.Now())
		return len(pending) == 1
	})
	text, isErr := routertest.CallText(t, h.Connect(nil), "run_code", map[string]any{"code": `return "started";`})
	want := "the program did not start: every sandbox is busy (EVOKORE_CODE_TOTAL_MEMORY_MB=64 holds 1 of EVOKORE_CODE_MEMORY_MB=64) and none ended within 2s; try again when one has"
	if !isErr || text != want {
		t.Errorf("a program that found the one sandbox busy: %q, want %q", text, want)
	}
	if r := <-first; !strings.Contains(r.Error, "waiting for approval") {
		t.Errorf("the program holding the sandbox: %+v", r)
	}

	_, cs := codeRig(t, "", map[string]string{"EVOKORE_CODE_MEMORY_MB": "64", "EVOKORE_CODE_TOTAL_MEMORY_MB": "32"})
	text, isErr = routertest.CallText(t, cs, "run_code", map[string]any{"code": `return 1;`})
	if !isErr || text != "run_code runs no program here: EVOKORE_CODE_TOTAL_MEMORY_MB (32) is less than one program's EVOKORE_CODE_MEMORY_MB (64)" {
		t.Errorf("one program's memory past the total: %q", text)
	}
}
