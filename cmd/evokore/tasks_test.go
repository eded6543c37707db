package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// taskClient is the TypeScript SDK's client (testdata/npm/task-client.mjs)
// driving MCP tasks of 2025-11-25 over one session.
type taskClient struct {
	t       *testing.T
	in      io.WriteCloser
	replies chan taskReply
	session string
	// caps is the server's tasks capability, as the client read it.
	caps json.RawMessage

	mu       sync.Mutex
	statuses []taskState
	elicited []json.RawMessage
}

type taskReply struct {
	Reply json.RawMessage `json:"reply"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Fatal string `json:"fatal"`
}

// taskState is a task as both eras show it.
type taskState struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval"`
}

func startTaskClient(t *testing.T, endpoint, token string) *taskClient {
	t.Helper()
	return startTaskClientWith(t, nil, endpoint, token)
}

// startTaskClientWith starts the client with args, in env when not nil:
// an endpoint and a token, or "stdio" and the command it starts.
func startTaskClientWith(t *testing.T, env []string, args ...string) *taskClient {
	t.Helper()
	script := filepath.Join(filepath.Dir(testutil.TSHTTPClientScript(t)), "task-client.mjs")
	cmd := exec.Command("node", append([]string{script}, args...)...)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &routertest.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := &taskClient{t: t, in: in, replies: make(chan taskReply, 1)}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var line struct {
				taskReply
				Ready    *string         `json:"ready"`
				Tasks    json.RawMessage `json:"tasks"`
				Status   *taskState      `json:"status"`
				Elicited json.RawMessage `json:"elicited"`
			}
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			switch {
			case line.Ready != nil:
				c.caps = line.Tasks
				ready <- *line.Ready
			case line.Status != nil:
				c.mu.Lock()
				c.statuses = append(c.statuses, *line.Status)
				c.mu.Unlock()
			case line.Elicited != nil:
				c.mu.Lock()
				c.elicited = append(c.elicited, line.Elicited)
				c.mu.Unlock()
			default:
				c.replies <- line.taskReply
			}
		}
		close(c.replies)
	}()
	select {
	case c.session = <-ready:
	case r := <-c.replies:
		t.Fatalf("the TypeScript client did not connect: %s\n%s", r.Fatal, stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("the TypeScript client did not connect:\n%s", stderr.String())
	}
	return c
}

// do sends one request; a JSON-RPC error is returned as its message.
func (c *taskClient) do(op string, fields map[string]any) (json.RawMessage, string) {
	c.t.Helper()
	q := map[string]any{"op": op}
	for k, v := range fields {
		q[k] = v
	}
	b, _ := json.Marshal(q)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	select {
	case r, ok := <-c.replies:
		switch {
		case !ok || r.Fatal != "":
			c.t.Fatalf("the TypeScript client stopped: %s", r.Fatal)
		case r.Error != nil:
			return nil, r.Error.Message
		}
		return r.Reply, ""
	case <-time.After(90 * time.Second):
		c.t.Fatalf("no answer to %s", b)
	}
	return nil, ""
}

// start calls tool as a task and returns the task created.
func (c *taskClient) start(tool string, args map[string]any, ttl int64) taskState {
	c.t.Helper()
	fields := map[string]any{"name": tool, "arguments": args}
	if ttl > 0 {
		fields["ttl"] = ttl
	}
	raw, msg := c.do("call", fields)
	var created struct{ Task taskState }
	if msg != "" || json.Unmarshal(raw, &created) != nil || created.Task.TaskID == "" {
		c.t.Fatalf("%s as a task: %s %s", tool, raw, msg)
	}
	return created.Task
}

// get is tasks/get; a refusal is returned as its message.
func (c *taskClient) get(id string) (taskState, string) {
	c.t.Helper()
	raw, msg := c.do("get", map[string]any{"taskId": id})
	var st taskState
	if msg == "" {
		if err := json.Unmarshal(raw, &st); err != nil {
			c.t.Fatalf("tasks/get: %s", raw)
		}
	}
	return st, msg
}

// await polls tasks/get, at the interval the task suggests, until the
// task's status is one of want, and returns the statuses seen before.
func (c *taskClient) await(id string, within time.Duration, want ...string) (taskState, []string) {
	c.t.Helper()
	var seen []string
	deadline := time.Now().Add(within)
	for {
		st, msg := c.get(id)
		if msg != "" {
			c.t.Fatalf("tasks/get %s: %s", id, msg)
		}
		for _, w := range want {
			if st.Status == w {
				return st, seen
			}
		}
		seen = append(seen, st.Status)
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s still %s (%s) after %v, want %v", id, st.Status, st.StatusMessage, within, want)
		}
		time.Sleep(time.Duration(max(st.PollInterval, 100)) * time.Millisecond)
	}
}

// toolText is the text of a call's result.
func toolText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var res struct {
		Content []struct{ Text string }
		IsError bool
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("not a tool result: %s", raw)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// Tasks of 2025-11-25 through `evokore serve --http`, driven by the
// TypeScript SDK's client: a 20 s run_code runs as a task polled to
// completion while, beside it, a child's call run as a task is cancelled
// mid-run (the child sees the cancellation) and a task past its ttl is
// gone; another subject's tasks/get, tasks/cancel and tasks/list find
// nothing of alice's, over either era.
func TestTasksThroughTheRouterWithARealClient(t *testing.T) {
	keys := newJWKS(t)
	base, _, stderr := httpRouter(t, "EVOKORE_TOOL_DISCOVERY_MODE=legacy", "EVOKORE_AUTH_REQUIRED=true", "EVOKORE_AUTH_MODE=jwt",
		"EVOKORE_OAUTH_JWKS_URI="+keys.url, "EVOKORE_OAUTH_ISSUER=https://issuer.test", "EVOKORE_OAUTH_AUDIENCE=evokore",
		"EVOKORE_TASK_POLL_MS=250")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("router output:\n%s", stderr.String())
		}
	})
	token := func(sub string) string {
		now := time.Now()
		return keys.sign(t, jwt.MapClaims{"iss": "https://issuer.test", "aud": "evokore", "sub": sub,
			"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "role": "admin"})
	}
	alice, bob := startTaskClient(t, base+"/mcp", token("alice")), startTaskClient(t, base+"/mcp", token("bob"))
	checkTaskSupport(t, alice)
	started := func() string { return alice.text("fx_read_cancelled", map[string]any{"started": true}) }

	// A 20 s program, as a task.
	long := alice.start("run_code", map[string]any{"code": `const r = await tools.fx_slow({ms: 20000}); return r[0].text;`}, 0)
	if long.Status != "working" || long.PollInterval != 250 {
		t.Errorf("the task created: %+v", long)
	}

	// A child's call cancelled mid-run: the child sees it.
	before := started()
	slow := alice.start("fx_slow", map[string]any{"ms": 60000}, 0)
	for started() == before {
		time.Sleep(100 * time.Millisecond)
	}
	raw, msg := alice.do("cancel", map[string]any{"taskId": slow.TaskID})
	var cancelled taskState
	if msg != "" || json.Unmarshal(raw, &cancelled) != nil || cancelled.Status != "cancelled" {
		t.Fatalf("tasks/cancel: %s %s", raw, msg)
	}
	if st, _ := alice.get(slow.TaskID); st.Status != "cancelled" {
		t.Errorf("after tasks/cancel: %+v", st)
	}
	for alice.text("fx_read_cancelled", map[string]any{}) != "cancelled: 1" {
		time.Sleep(100 * time.Millisecond)
	}
	if _, msg := alice.do("cancel", map[string]any{"taskId": slow.TaskID}); !strings.Contains(msg, "already in terminal status 'cancelled'") {
		t.Errorf("a second tasks/cancel: %q", msg)
	}

	// A task past its ttl is gone, result and all.
	short := alice.start("fx_echo", map[string]any{"message": "brief"}, 1500)
	if short.TTL != 1500 {
		t.Errorf("a ttl of 1500 ms asked, %d given", short.TTL)
	}
	alice.await(short.TaskID, time.Minute, "completed")
	for {
		_, msg := alice.get(short.TaskID)
		if msg != "" {
			if !strings.Contains(msg, "Task not found") {
				t.Errorf("past its ttl: %q", msg)
			}
			break
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Bob knows nothing of alice's tasks, in either era.
	checkIsolation(t, alice, bob, long.TaskID, func(sub string) string {
		return post26(t, base+"/mcp", token(sub), "tasks/get", map[string]any{"taskId": long.TaskID})
	})

	// The program ends, and its task with it.
	end, seen := alice.await(long.TaskID, time.Minute, "completed", "failed", "cancelled")
	res, msg := alice.do("result", map[string]any{"taskId": long.TaskID})
	if end.Status != "completed" || msg != "" || !strings.Contains(toolText(t, res), "slept 20000ms") {
		t.Fatalf("the 20 s run_code ended %+v: %s %s", end, res, msg)
	}
	if len(seen) < 2 {
		t.Errorf("polled only %d times while the program ran", len(seen))
	}
	t.Logf("polled the 20 s run_code task %d times while it worked", len(seen))
	alice.mu.Lock()
	t.Logf("status notifications: %+v", alice.statuses)
	alice.mu.Unlock()
}

// text runs tool as a task to its end and returns its result's text.
func (c *taskClient) text(tool string, args map[string]any) string {
	c.t.Helper()
	task := c.start(tool, args, 0)
	c.await(task.TaskID, time.Minute, "completed")
	res, msg := c.do("result", map[string]any{"taskId": task.TaskID})
	if msg != "" {
		c.t.Fatalf("tasks/result of %s: %s", tool, msg)
	}
	return toolText(c.t, res)
}

// checkTaskSupport checks the tasks capability of 2025-11-25 and the
// task support run_code and execute_skill are listed with, as c read them.
func checkTaskSupport(t *testing.T, c *taskClient) {
	t.Helper()
	if !strings.Contains(string(c.caps), `"requests":{"tools":{"call":{}}}`) {
		t.Errorf("the tasks capability the client read: %s", c.caps)
	}
	raw, _ := c.do("tools", nil)
	var listed struct {
		Tools []struct {
			Name      string
			Execution struct{ TaskSupport string }
		}
	}
	_ = json.Unmarshal(raw, &listed)
	support := map[string]string{}
	for _, tool := range listed.Tools {
		support[tool.Name] = tool.Execution.TaskSupport
	}
	if support["run_code"] != "optional" || support["execute_skill"] != "optional" {
		t.Errorf("run_code's and execute_skill's task support: %q %q", support["run_code"], support["execute_skill"])
	}
}

// checkIsolation checks that bob finds nothing of alice's task id, and
// alice does: over their sessions, and with get26, a 2026-07-28 tasks/get
// of id by a subject.
func checkIsolation(t *testing.T, alice, bob *taskClient, id string, get26 func(sub string) string) {
	t.Helper()
	if _, msg := bob.get(id); !strings.Contains(msg, "Task not found") {
		t.Errorf("bob's tasks/get of alice's task: %q", msg)
	}
	if _, msg := bob.do("cancel", map[string]any{"taskId": id}); !strings.Contains(msg, "Task not found") {
		t.Errorf("bob's tasks/cancel of alice's task: %q", msg)
	}
	if raw, _ := bob.do("list", nil); strings.Contains(string(raw), id) {
		t.Errorf("bob's tasks/list: %s", raw)
	}
	if raw, _ := alice.do("list", nil); !strings.Contains(string(raw), id) {
		t.Errorf("alice's tasks/list: %s", raw)
	}
	if body := get26("bob"); !strings.Contains(body, "Task not found") {
		t.Errorf("bob's 2026-07-28 tasks/get: %s", body)
	}
	if body := get26("alice"); !strings.Contains(body, `"taskId":"`+id+`"`) {
		t.Errorf("alice's 2026-07-28 tasks/get of her task: %s", body)
	}
}

// post26 sends a 2026-07-28 request of a client that declares the tasks
// extension, and returns the response's body.
func post26(t *testing.T, url, token, method string, params map[string]any) string {
	t.Helper()
	hdr := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	for _, k := range []string{"name", "taskId"} {
		if v, ok := params[k].(string); ok {
			hdr["Mcp-Name"] = v
		}
	}
	_, _, body := do(t, "POST", url, token, hdr, sessionless(method, params))
	return body
}

// sessionless is a 2026-07-28 request body of a client that declares the
// tasks extension.
func sessionless(method string, params map[string]any) string {
	p := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":      map[string]any{"name": "raw", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{
			"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
	}}
	for k, v := range params {
		p[k] = v
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": p})
	return string(b)
}

// task26 is a 2026-07-28 answer about a task: tools/call's, tasks/get's.
type task26 struct {
	ResultType    string          `json:"resultType"`
	TaskID        string          `json:"taskId"`
	Status        string          `json:"status"`
	StatusMessage string          `json:"statusMessage"`
	Result        json.RawMessage `json:"result"`
	Error         *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Content []struct{ Text string } `json:"content"`
}

// call26 posts a 2026-07-28 request to a replica and decodes its result;
// a JSON-RPC error fails the test.
func call26(t *testing.T, r *replica, method string, params map[string]any) task26 {
	t.Helper()
	body := post26(t, "http://"+r.addr+"/mcp", "", method, params)
	if i := strings.Index(body, "data: "); i >= 0 && strings.HasPrefix(body, "event:") {
		body = strings.TrimSpace(body[i+len("data: "):])
	}
	var res struct {
		Result task26 `json:"result"`
		Error  *struct{ Message string }
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil || res.Error != nil {
		t.Fatalf("%s on %s: %s", method, r.addr, body)
	}
	return res.Result
}

// await26 polls tasks/get on r until the task's status is want.
func await26(t *testing.T, r *replica, id, want string, within time.Duration) task26 {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := call26(t, r, "tasks/get", map[string]any{"taskId": id})
		if got.Status == want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s on %s: %s (%s) after %v, want %s", id, r.addr, got.Status, got.StatusMessage, within, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var heldApprovalID = regexp.MustCompile(`approval ([0-9a-f]{16})`)

// Three `evokore serve --http` replicas sharing a redis-server, each
// asked directly by a 2026-07-28 client that declares the tasks
// extension:
//
//   - a child's call made a task through replica 1 is read through
//     replica 2 and cancelled through replica 3, and replica 1's child
//     sees the cancellation;
//   - a call held for an operator's approval is a task that says what it
//     waits for, and the approval (`evokore approvals approve`) resumes it
//     to its result;
//   - a replica stopped (SIGINT) while its task runs fails the task,
//     saying so, on every replica and on itself restarted; a replica
//     killed (SIGKILL) fails its task once its heartbeat is stale.
func TestTasksAcrossReplicasSharingRedis(t *testing.T) {
	bin := testutil.Evokore(t)
	redisURL := testutil.RedisServer(t)
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fx": map[string]any{"command": testutil.FixtureServer(t)}}})
	testutil.WriteFile(t, dir, "permissions.yml", "rules:\n  fx_count: require_approval\n")
	env := []string{
		"EVOKORE_MCP_CONFIG_PATH=" + cfg,
		"EVOKORE_PERMISSIONS_PATH=" + filepath.Join(dir, "permissions.yml"),
		"EVOKORE_TOOL_DISCOVERY_MODE=legacy",
		"EVOKORE_APPROVALS_MODE=operator",
		"EVOKORE_SESSION_STORE=redis",
		"EVOKORE_REDIS_URL=" + redisURL,
		"EVOKORE_REDIS_KEY_PREFIX=tasks:",
	}
	var replicas []*replica
	for i := range 3 {
		replicas = append(replicas, startReplica(t, bin, filepath.Join(dir, fmt.Sprintf("r%d", i)), env))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, r := range replicas {
				t.Logf("replica %d output:\n%s", i+1, r.out.String())
			}
		}
	})
	r1, r2, r3 := replicas[0], replicas[1], replicas[2]
	slow := map[string]any{"name": "fx_slow", "arguments": map[string]any{"ms": 120000}}

	// Made on 1, read on 2, cancelled on 3; 1's child sees it.
	made := call26(t, r1, "tools/call", slow)
	if made.ResultType != "task" || made.Status != "working" {
		t.Fatalf("a 2 min call did not become a task: %+v", made)
	}
	if got := call26(t, r2, "tasks/get", map[string]any{"taskId": made.TaskID}); got.Status != "working" {
		t.Errorf("through replica 2: %+v", got)
	}
	if ack := call26(t, r3, "tasks/cancel", map[string]any{"taskId": made.TaskID}); ack.ResultType != "complete" {
		t.Errorf("tasks/cancel through replica 3: %+v", ack)
	}
	await26(t, r2, made.TaskID, "cancelled", time.Minute)
	for {
		res := call26(t, r1, "tools/call", map[string]any{"name": "fx_read_cancelled", "arguments": map[string]any{}})
		if len(res.Content) == 1 && res.Content[0].Text == "cancelled: 1" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Held for approval: a task waiting, resumed by the approval.
	held := call26(t, r1, "tools/call", map[string]any{"name": "fx_count", "arguments": map[string]any{}})
	if held.ResultType != "task" {
		t.Fatalf("a call held for approval did not become a task: %+v", held)
	}
	waiting := call26(t, r2, "tasks/get", map[string]any{"taskId": held.TaskID})
	m := heldApprovalID.FindStringSubmatch(waiting.StatusMessage)
	if waiting.Status != "working" || m == nil || !strings.Contains(waiting.StatusMessage, "'fx_count' is waiting for approval") {
		t.Fatalf("the held task: %+v", waiting)
	}
	cli := exec.Command(bin, "approvals", "approve", "--unsafe-no-tty", m[1])
	cli.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "cli")}, env...)
	if out, err := cli.CombinedOutput(); err != nil || !strings.Contains(string(out), "Approved approval "+m[1]) {
		t.Fatalf("approvals approve: %v %s", err, out)
	}
	done := await26(t, r3, held.TaskID, "completed", time.Minute)
	if text := toolText(t, done.Result); text != "calls: 1" {
		t.Errorf("the approved task's result: %s", done.Result)
	}

	// Stopped while its task runs: failed, saying so, everywhere.
	stopped := call26(t, r2, "tools/call", slow)
	_ = r2.cmd.Process.Signal(os.Interrupt)
	_ = r2.cmd.Wait()
	failed := await26(t, r3, stopped.TaskID, "failed", time.Minute)
	if failed.Error == nil || !strings.Contains(failed.Error.Message, "evokore shut down while the task ran; call the tool again") {
		t.Errorf("a task its replica stopped under: %+v", failed)
	}
	again := startReplica(t, bin, filepath.Join(dir, "r1"), env)
	if got := call26(t, again, "tasks/get", map[string]any{"taskId": stopped.TaskID}); got.Status != "failed" {
		t.Errorf("through the restarted replica: %+v", got)
	}

	// Killed while its task runs: failed once nobody says it runs.
	killed := call26(t, r3, "tools/call", slow)
	_ = r3.cmd.Process.Kill()
	_ = r3.cmd.Wait()
	lost := await26(t, r1, killed.TaskID, "failed", time.Minute)
	if lost.Error == nil || !strings.Contains(lost.Error.Message, "stopped before it ended (a restart or a crash)") {
		t.Errorf("a task its replica died under: %+v", lost)
	}
}

// Over stdio the client hears of its task's every change
// (notifications/tasks/status): working, then completed, or cancelled. A
// call of a task that needs approval asks the user (elicitation) for
// that task (its related-task _meta) and runs once the user accepts.
func TestTaskStatusNotificationsOverStdio(t *testing.T) {
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fx": map[string]any{"command": testutil.FixtureServer(t)}}})
	testutil.WriteFile(t, dir, "permissions.yml", "rules:\n  fx_count: require_approval\n")
	c := startTaskClientWith(t, []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir,
		"EVOKORE_HOME=" + filepath.Join(dir, "home"), "EVOKORE_MCP_CONFIG_PATH=" + cfg, "EVOKORE_TOOL_DISCOVERY_MODE=legacy",
		"EVOKORE_PERMISSIONS_PATH=" + filepath.Join(dir, "permissions.yml")},
		"stdio", testutil.Evokore(t), "serve")
	heard := func(id, status string) bool {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			c.mu.Lock()
			for _, st := range c.statuses {
				if st.TaskID == id && st.Status == status {
					c.mu.Unlock()
					return true
				}
			}
			c.mu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
		return false
	}
	done := c.start("fx_slow", map[string]any{"ms": 1000}, 0)
	c.await(done.TaskID, time.Minute, "completed")
	if !heard(done.TaskID, "completed") {
		t.Errorf("no completed status notification for %s", done.TaskID)
	}
	stopped := c.start("fx_slow", map[string]any{"ms": 60000}, 0)
	if _, msg := c.do("cancel", map[string]any{"taskId": stopped.TaskID}); msg != "" {
		t.Fatal(msg)
	}
	if !heard(stopped.TaskID, "cancelled") {
		t.Errorf("no cancelled status notification for %s", stopped.TaskID)
	}

	gated := c.start("fx_count", map[string]any{}, 0)
	c.await(gated.TaskID, time.Minute, "completed")
	res, msg := c.do("result", map[string]any{"taskId": gated.TaskID})
	if msg != "" || toolText(t, res) != "calls: 1" {
		t.Errorf("the approved task's result: %s %s", res, msg)
	}
	c.mu.Lock()
	elicited := c.elicited
	c.mu.Unlock()
	if len(elicited) != 1 || !strings.Contains(string(elicited[0]), `"io.modelcontextprotocol/related-task":{"taskId":"`+gated.TaskID+`"}`) {
		t.Errorf("the approval asked: %s", elicited)
	}
}
