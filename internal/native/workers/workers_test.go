package workers_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native/workers"
	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// admin runs under the shipped admin role, which may dispatch workers
// without an approval.
var admin = map[string]string{"EVOKORE_ROLE": "admin"}

type dispatched struct {
	WorkerID   string `json:"workerId"`
	WorkerType string `json:"workerType"`
	SessionID  string `json:"sessionId"`
	Status     string `json:"status"`
	Hint       string `json:"hint"`
}

func dispatch(t *testing.T, cs *mcp.ClientSession, session, typ string, options map[string]any) dispatched {
	t.Helper()
	args := map[string]any{"session_id": session, "worker_type": typ}
	if options != nil {
		args["options"] = options
	}
	text, isErr := routertest.CallText(t, cs, "worker_dispatch", args)
	if isErr {
		t.Fatalf("dispatch %s: %s", typ, text)
	}
	d := routertest.DecodeJSON[dispatched](t, text)
	if d.WorkerType != typ || d.SessionID != session || d.Status != "pending" || !strings.HasPrefix(d.WorkerID, typ+"-") ||
		d.Hint != "Poll worker_context with this workerId to read the result." {
		t.Errorf("dispatch = %s", text)
	}
	return d
}

// finished polls worker_context until the worker completes or fails.
func finished(t *testing.T, cs *mcp.ClientSession, session, id string) workers.State {
	t.Helper()
	var st workers.State
	routertest.WaitFor(t, "worker "+id+" to finish", func() bool {
		text, isErr := routertest.CallText(t, cs, "worker_context", map[string]any{"session_id": session, "worker_id": id})
		if isErr {
			t.Fatal(text)
		}
		st = routertest.DecodeJSON[workers.State](t, text)
		return st.Status == "complete" || st.Status == "error"
	})
	return st
}

func result[T any](t *testing.T, st workers.State) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(st.Result, &v); err != nil {
		t.Fatalf("result: %v\n%s", err, st.Result)
	}
	return v
}

func write(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRepoAnalysis(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	root := t.TempDir()
	write(t, root, "main.go", "package main\n\nfunc main() {}\n")
	write(t, root, "internal/a/a.go", "package a\n")
	write(t, root, "web/app.ts", "export const x = 1\nexport const y = 2")
	write(t, root, "README.md", strings.Repeat("words\n", 50))
	write(t, root, "LICENSE", "text")
	write(t, root, "node_modules/dep/index.js", "ignored\n")
	write(t, root, ".git/HEAD", "ref: refs/heads/feature/x\n")

	d := dispatch(t, cs, "sess-1", "repo_analysis", map[string]any{"root": root})
	st := finished(t, cs, "sess-1", d.WorkerID)
	if st.Status != "complete" || st.WorkerID != d.WorkerID || st.WorkerScript != "repo_analysis" || st.StartedAt == "" || st.CompletedAt == "" || st.Error != "" {
		t.Fatalf("state = %+v", st)
	}
	a := result[workers.Analysis](t, st)
	if a.Root != root || a.TotalFiles != 5 || a.OtherFiles != 1 || a.GitBranch != "feature/x" || a.TotalLines != 3+1+2+50 {
		t.Errorf("analysis = %+v", a)
	}
	got := map[string]workers.Language{}
	for _, l := range a.Languages {
		got[l.Language] = l
	}
	if got["Go"].Files != 2 || got["Go"].Lines != 4 || got["TypeScript"].Files != 1 || got["Markdown"].Lines != 50 || a.Languages[0].Language != "Go" {
		t.Errorf("languages = %+v", a.Languages)
	}
	if len(a.LargestFiles) != 5 || a.LargestFiles[0].Path != "README.md" {
		t.Errorf("largest = %+v", a.LargestFiles)
	}
	if opts, _ := st.Options["root"].(string); opts != root {
		t.Errorf("options = %+v", st.Options)
	}
}

func TestSecurityScanRedactsWhatItFinds(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	root := t.TempDir()
	// Built at run time so that no secret-shaped literal sits in the repo.
	awsKey := "AKIA" + "Q3EXAMPLEKEY7777"
	ghToken := "ghp_" + strings.Repeat("a1B2", 9)
	write(t, root, "config/settings.py", "DEBUG = True\nAWS_KEY = '"+awsKey+"'\n")
	write(t, root, "deploy.sh", "#!/bin/sh\nexport GITHUB_TOKEN="+ghToken+"\n")
	write(t, root, "keys/id.pem", "-----BEGIN RSA "+"PRIVATE KEY-----\nMIIB\n")
	write(t, root, "app.js", `const password = "`+"hunter2hunter2hunter2"+`";`+"\n")
	write(t, root, "clean.go", "package clean\n")
	write(t, root, "blob.bin", "\x00\x01"+awsKey)
	write(t, root, "vendor/lib/leak.go", awsKey)

	d := dispatch(t, cs, "sess-1", "security_scan", map[string]any{"root": root})
	st := finished(t, cs, "sess-1", d.WorkerID)
	if st.Status != "complete" {
		t.Fatalf("state = %+v", st)
	}
	s := result[workers.Scan](t, st)
	if s.ScannedFiles != 5 || s.SkippedFiles != 1 || s.FindingCount != 4 || len(s.Findings) != 4 {
		t.Fatalf("scan = %+v", s)
	}
	want := map[string]workers.Finding{
		"config/settings.py": {ID: "aws_access_key", Severity: "high", File: "config/settings.py", Line: 2, Snippet: "AWS_KEY = 'AKIA…[redacted]'"},
		"deploy.sh":          {ID: "github_token", Severity: "high", File: "deploy.sh", Line: 2, Snippet: "export GITHUB_TOKEN=ghp_…[redacted]"},
		"keys/id.pem":        {ID: "private_key_block", Severity: "high", File: "keys/id.pem", Line: 1, Snippet: "-----BEGIN RSA PRIVATE KEY-----"},
		"app.js":             {ID: "hardcoded_secret", Severity: "high", File: "app.js", Line: 1, Snippet: `const password = "hunt…[redacted]";`},
	}
	for _, f := range s.Findings {
		if f != want[f.File] {
			t.Errorf("finding %+v, want %+v", f, want[f.File])
		}
	}
	raw, _ := os.ReadFile(filepath.Join(h.Dir, "home", "workers", "sess-1", d.WorkerID+".json"))
	if strings.Contains(string(raw), awsKey) || strings.Contains(string(raw), ghToken) {
		t.Error("a secret reached the persisted state")
	}
}

func TestTestRunWithACommand(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	dir := t.TempDir()
	d := dispatch(t, cs, "s", "test_run", map[string]any{"command": []string{"sh", "-c", "echo all good; pwd"}, "cwd": dir})
	st := finished(t, cs, "s", d.WorkerID)
	r := result[workers.TestRun](t, st)
	if st.Status != "complete" || !r.Passed || r.ExitCode != 0 || r.Cwd != dir || r.Output != "all good\n"+dir+"\n" || r.Go != nil {
		t.Errorf("passing run = %+v %+v", st, r)
	}

	d = dispatch(t, cs, "s", "test_run", map[string]any{"command": []string{"sh", "-c", "echo 1 failed >&2; exit 3"}, "cwd": dir})
	st = finished(t, cs, "s", d.WorkerID)
	r = result[workers.TestRun](t, st)
	if st.Status != "complete" || r.Passed || r.ExitCode != 3 || r.Output != "1 failed\n" {
		t.Errorf("failing run = %+v %+v", st, r)
	}

	d = dispatch(t, cs, "s", "test_run", map[string]any{"command": []string{"evokore-no-such-command"}, "cwd": dir})
	st = finished(t, cs, "s", d.WorkerID)
	if st.Status != "error" || !strings.Contains(st.Error, `cannot start "evokore-no-such-command"`) {
		t.Errorf("missing command = %+v", st)
	}
}

func TestTestRunInfersGoTest(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go is not on PATH")
	}
	env := map[string]string{"EVOKORE_ROLE": "admin", "PATH": filepath.Dir(goBin) + string(os.PathListSeparator) + os.Getenv("PATH"), "GOTOOLCHAIN": "local", "GOFLAGS": ""}
	for _, k := range []string{"GOCACHE", "GOPATH", "GOMODCACHE"} {
		out, err := exec.Command(goBin, "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		env[k] = strings.TrimSpace(string(out))
	}
	h := routertest.New(t, map[string]any{}, env)
	cs := h.Connect(nil)
	mod := t.TempDir()
	write(t, mod, "go.mod", "module example.com/w\n\ngo 1.22\n")
	write(t, mod, "w.go", "package w\n\nfunc Add(a, b int) int { return a + b }\n")
	write(t, mod, "w_test.go", "package w\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"math\")\n\t}\n}\n\nfunc TestBroken(t *testing.T) { t.Fatal(\"on purpose\") }\n")

	d := dispatch(t, cs, "s", "test_run", map[string]any{"cwd": mod})
	st := finished(t, cs, "s", d.WorkerID)
	r := result[workers.TestRun](t, st)
	if st.Status != "complete" || strings.Join(r.Command, " ") != "go test ./..." || r.Passed || r.ExitCode == 0 {
		t.Fatalf("go test run = %+v\n%s", st, r.Output)
	}
	if r.Go == nil || r.Go.PackagesFailed != 1 || strings.Join(r.Go.FailedTests, ",") != "TestBroken" {
		t.Errorf("go summary = %+v\n%s", r.Go, r.Output)
	}
}

func TestTestRunTimeoutKillsTheCommand(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	pidFile := filepath.Join(t.TempDir(), "pid")
	d := dispatch(t, cs, "s", "test_run", map[string]any{
		"command":   []string{"sh", "-c", `echo $$ > "$0"; sleep 300`, pidFile},
		"timeoutMs": 1500,
	})
	st := finished(t, cs, "s", d.WorkerID)
	r := result[workers.TestRun](t, st)
	if st.Status != "error" || st.Error != "timed out after 1500ms" || !r.TimedOut || r.Passed {
		t.Errorf("timed-out run = %+v %+v", st, r)
	}
	b, _ := os.ReadFile(pidFile)
	if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid == 0 || procgroup.Alive(pid) {
		t.Errorf("the timed-out command (pid %d) still runs", pid)
	}
}

func TestBenchmark(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	d := dispatch(t, cs, "s", "benchmark", map[string]any{"command": []string{"true"}, "iterations": 3, "warmup": 1})
	st := finished(t, cs, "s", d.WorkerID)
	b := result[workers.Benchmark](t, st)
	if st.Status != "complete" || b.Iterations != 3 || b.Warmup != 1 || len(b.Runs) != 3 || b.Failures != 0 ||
		b.MinMs <= 0 || b.MinMs > b.MedianMs || b.MedianMs > b.MaxMs || b.MeanMs < b.MinMs || b.MeanMs > b.MaxMs || b.StddevMs < 0 {
		t.Errorf("benchmark = %+v", b)
	}
	d = dispatch(t, cs, "s", "benchmark", map[string]any{"command": []string{"false"}, "iterations": 2})
	b = result[workers.Benchmark](t, finished(t, cs, "s", d.WorkerID))
	if b.Failures != 2 || b.Runs[0].ExitCode != 1 {
		t.Errorf("failing benchmark = %+v", b)
	}
}

// benchmark with no options times a probe, as EVOKORE-MCP's does.
func TestBenchmarkWithoutOptionsRunsAProbe(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	d := dispatch(t, cs, "s", "benchmark", nil)
	st := finished(t, cs, "s", d.WorkerID)
	b := result[workers.Benchmark](t, st)
	if st.Status != "complete" || b.Probe == "" || len(b.Runs) != 5 || b.Failures != 0 || b.MinMs <= 0 {
		t.Errorf("probe benchmark = %s %+v", st.Status, b)
	}
}

func TestDispatchRefusals(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	empty := t.TempDir()
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"session_id": "", "worker_type": "test_run"}, "Missing required argument: session_id"},
		{map[string]any{"session_id": "s", "worker_type": "benchmark", "options": map[string]any{"command": []string{"true"}, "iterations": 0}}, "options.iterations must be between 1 and 100, not 0"},
		{map[string]any{"session_id": "s", "worker_type": "test_run", "options": map[string]any{"cwd": empty}}, "test_run needs options.command (an argv array such as [\"make\", \"test\"]): " + empty + " has no go.mod, package.json, pyproject.toml or Cargo.toml to infer it from"},
		{map[string]any{"session_id": "s", "worker_type": "repo_analysis", "options": map[string]any{"root": filepath.Join(empty, "nope")}}, "options.root is not a directory: " + filepath.Join(empty, "nope")},
		{map[string]any{"session_id": "s", "worker_type": "test_run", "options": map[string]any{"command": []string{}}}, "options.command must be a non-empty array of strings, not []"},
	}
	for _, c := range cases {
		if text, isErr := routertest.CallText(t, cs, "worker_dispatch", c.args); !isErr || text != c.want {
			t.Errorf("dispatch %v = %v %q\nwant %q", c.args, isErr, text, c.want)
		}
	}
	text, isErr := routertest.CallText(t, cs, "worker_dispatch", map[string]any{"session_id": "s", "worker_type": "test_run", "options": map[string]any{"command": "make test"}})
	if !isErr || !strings.HasPrefix(text, "options do not fit test_run: ") {
		t.Errorf("string command = %v %q", isErr, text)
	}
	if text, isErr := routertest.CallText(t, cs, "worker_dispatch", map[string]any{"session_id": "s", "worker_type": "lint"}); !isErr || !strings.Contains(text, "Invalid arguments for 'worker_dispatch'") {
		t.Errorf("unknown type = %v %q", isErr, text)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "home", "workers")); !os.IsNotExist(err) {
		t.Errorf("a refused dispatch wrote state: %v", err)
	}
}

func TestWorkerContextErrors(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"session_id": "", "worker_id": "w"}, "Missing required argument: session_id"},
		{map[string]any{"session_id": "s", "worker_id": ""}, "Missing required argument: worker_id"},
		{map[string]any{"session_id": "s", "worker_id": "test_run-1-abc"}, "Worker test_run-1-abc not found for session s."},
		{map[string]any{"session_id": "s", "worker_id": "../../etc/passwd"}, "Worker ../../etc/passwd not found for session s."},
	}
	for _, c := range cases {
		if text, isErr := routertest.CallText(t, cs, "worker_context", c.args); !isErr || text != c.want {
			t.Errorf("worker_context %v = %v %q, want %q", c.args, isErr, text, c.want)
		}
	}
}

func TestWorkersSurviveARestart(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	env := map[string]string{"EVOKORE_ROLE": "admin", "EVOKORE_HOME": home}
	h1 := routertest.New(t, map[string]any{}, env)
	cs1 := h1.Connect(nil)
	root := t.TempDir()
	write(t, root, "x.go", "package x\n")
	d := dispatch(t, cs1, "agent/one", "repo_analysis", map[string]any{"root": root})
	before := finished(t, cs1, "agent/one", d.WorkerID)
	_ = cs1.Close()
	h1.Server.Close()

	if _, err := os.Stat(filepath.Join(home, "workers", "agent_one", d.WorkerID+".json")); err != nil {
		t.Errorf("state file: %v", err)
	}
	h2 := routertest.New(t, map[string]any{}, env)
	cs2 := h2.Connect(nil)
	text, isErr := routertest.CallText(t, cs2, "worker_context", map[string]any{"session_id": "agent/one", "worker_id": d.WorkerID})
	after := routertest.DecodeJSON[workers.State](t, text)
	if isErr || after.Status != "complete" || after.CompletedAt != before.CompletedAt || string(after.Result) == "" {
		t.Errorf("after restart = %s", text)
	}
}

func TestShutdownCancelsRunningWorkers(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	pidFile := filepath.Join(t.TempDir(), "pid")
	d := dispatch(t, cs, "s", "test_run", map[string]any{"command": []string{"sh", "-c", `echo $$ > "$0"; sleep 300`, pidFile}})
	var pid int
	routertest.WaitFor(t, "the command to start", func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	h.Server.Close()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) && procgroup.Alive(pid) {
		t.Errorf("the worker's command (pid %d) outlived the router", pid)
	}
	var st workers.State
	b, err := os.ReadFile(filepath.Join(h.Dir, "home", "workers", "s", d.WorkerID+".json"))
	if err != nil || json.Unmarshal(b, &st) != nil || st.Status != "error" || st.Error != "cancelled: the router shut down" {
		t.Errorf("state after shutdown = %s (%v)", b, err)
	}
}

func TestAWorkerOfADeadRouterReadsAsInterrupted(t *testing.T) {
	h := routertest.New(t, map[string]any{}, admin)
	cs := h.Connect(nil)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	state := workers.State{WorkerID: "benchmark-1-aaaaaa", WorkerScript: "benchmark", Status: "running",
		StartedAt: time.Now().UTC().Format(time.RFC3339), Options: map[string]any{}, OwnerPID: dead.Process.Pid}
	write(t, filepath.Join(h.Dir, "home", "workers", "s"), "benchmark-1-aaaaaa.json", func() string { b, _ := json.Marshal(state); return string(b) }())
	text, _ := routertest.CallText(t, cs, "worker_context", map[string]any{"session_id": "s", "worker_id": "benchmark-1-aaaaaa"})
	st := routertest.DecodeJSON[workers.State](t, text)
	want := "interrupted: the router that ran it (pid " + strconv.Itoa(dead.Process.Pid) + ") exited before it finished"
	if st.Status != "error" || st.Error != want || st.CompletedAt == "" {
		t.Errorf("state = %s", text)
	}
}

func TestWorkerCommandsGetTheAllowlistNotTheRouterSecrets(t *testing.T) {
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_ROLE": "admin", "ROUTER_ONLY_SECRET": "s3cr3t", "GOFLAGS": "-count=1"})
	cs := h.Connect(nil)
	d := dispatch(t, cs, "s", "test_run", map[string]any{"command": []string{"sh", "-c", `echo "secret=${ROUTER_ONLY_SECRET:-unset} goflags=$GOFLAGS"`}})
	st := finished(t, cs, "s", d.WorkerID)
	if r := result[workers.TestRun](t, st); r.Output != "secret=unset goflags=-count=1\n" {
		t.Errorf("a worker command sees %q: the toolchain's variables, never another secret", r.Output)
	}
}
