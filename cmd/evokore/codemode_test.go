package main_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native/codemode"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// TestMain lets this test binary serve as run_code's sandbox, as the
// evokore binary does for itself: the in-process routers of these tests
// start os.Executable() with codemode.SandboxArg.
func TestMain(m *testing.M) {
	if codemode.IsSandbox(os.Args) {
		os.Exit(codemode.Sandbox(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// codeRun is run_code's answer.
type codeRun struct {
	Run   string          `json:"run"`
	Value json.RawMessage `json:"value"`
	Log   []string        `json:"log"`
	Calls int             `json:"calls"`
	Error string          `json:"error"`
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
	h := routertest.NewWithConfig(t, dir, cfg, env)
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

var _ = sync.Mutex{}
