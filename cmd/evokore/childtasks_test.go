package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/testutil"
)

// childLog reads the JSON lines a child read or wrote (tee'd to a file
// by the shell the child runs in) and returns the tasks they name: the
// taskId of each result that is a task or holds one, in order, and the
// statuses each was shown with.
func childLog(t *testing.T, path string) (ids []string, statuses map[string][]string, methods map[string][]string) {
	t.Helper()
	statuses, methods = map[string][]string{}, map[string][]string{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, statuses, methods
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() {
		var m struct {
			Method string `json:"method"`
			Params struct {
				TaskID string `json:"taskId"`
			} `json:"params"`
			Result struct {
				TaskID string `json:"taskId"`
				Status string `json:"status"`
				Task   *struct {
					TaskID string `json:"taskId"`
					Status string `json:"status"`
				} `json:"task"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch {
		case m.Method != "" && m.Params.TaskID != "":
			methods[m.Params.TaskID] = append(methods[m.Params.TaskID], m.Method)
		case m.Result.Task != nil && m.Result.Task.TaskID != "":
			ids = append(ids, m.Result.Task.TaskID)
			statuses[m.Result.Task.TaskID] = append(statuses[m.Result.Task.TaskID], m.Result.Task.Status)
		case m.Result.TaskID != "":
			statuses[m.Result.TaskID] = append(statuses[m.Result.TaskID], m.Result.Status)
		}
	}
	return ids, statuses, methods
}

// A child's tool that runs only as a task (the npm server-everything's
// simulate-research-query, taskSupport "required") works through the
// router, driven by the TypeScript SDK's client over stdio: listed as
// "optional"; called as a task, the router runs the child's own task
// and polls it to its result; called plainly, the router runs the
// child's task and answers the call with its result; a router task
// cancelled mid-run cancels the child's task (the child answers
// tasks/cancel with the task cancelled); and no id of the child's tasks
// reaches the client.
func TestAChildsOwnTaskRunsThroughTheRouter(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "child-in.jsonl"), filepath.Join(dir, "child-out.jsonl")
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"ev": map[string]any{"command": "sh", "args": []string{"-c", `tee -a "$0" | node "$1" stdio | tee -a "$2"`,
			in, testutil.NPMServer(t, "server-everything"), out}}}})
	c := startTaskClientWith(t, []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir,
		"EVOKORE_HOME=" + filepath.Join(dir, "home"), "EVOKORE_MCP_CONFIG_PATH=" + cfg, "EVOKORE_TOOL_DISCOVERY_MODE=legacy"},
		"stdio", testutil.Evokore(t), "serve")
	ownTaskThroughTheRouter(t, c, in, out, true)
}

// The same tool through `evokore serve --http` for 2026-07-28 callers:
// one that declares the tasks extension gets a router task whose
// tasks/get inlines the child's task's result; one that does not is
// answered plainly with it.
func TestAChildsOwnTaskFor2026Callers(t *testing.T) {
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"ev": map[string]any{"command": "node", "args": []string{testutil.NPMServer(t, "server-everything"), "stdio"}}}})
	base, _, stderr := httpRouter(t, "EVOKORE_MCP_CONFIG_PATH="+cfg, "EVOKORE_TOOL_DISCOVERY_MODE=legacy", "EVOKORE_TASK_POLL_MS=250")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("router output:\n%s", stderr.String())
		}
	})
	r := &replica{addr: strings.TrimPrefix(base, "http://")}
	const tool = "ev_simulate-research-query"

	made := call26(t, r, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{"topic": "tides"}})
	if made.ResultType != "task" || made.TaskID == "" {
		t.Fatalf("a call that declares the extension: %+v", made)
	}
	done := await26(t, r, made.TaskID, "completed", time.Minute)
	if !strings.Contains(string(done.Result), "# Research Report: tides") {
		t.Errorf("the task's result: %s", done.Result)
	}

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"topic":"reefs"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`
	_, _, got := do(t, "POST", base+"/mcp", "", map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}, body)
	if !strings.Contains(got, "# Research Report: reefs") || strings.Contains(got, "related-task") {
		t.Errorf("a plain call: %s", got)
	}
}

// tap is a reverse proxy to target that appends each JSON-RPC message
// it passes to a file: the requests' bodies to in, the answers' (a JSON
// body, or each event's data) to out, one a line.
func tap(t *testing.T, target, in, out string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	write := func(path string, msg []byte) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = f.Write(append(bytes.TrimSpace(msg), '\n'))
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ModifyResponse = func(resp *http.Response) error {
		pr, pw := io.Pipe()
		body := resp.Body
		events := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
		go func() {
			defer body.Close()
			if !events {
				b, err := io.ReadAll(body)
				write(out, b)
				_, _ = pw.Write(b)
				pw.CloseWithError(err)
				return
			}
			r := bufio.NewReader(body)
			for {
				line, err := r.ReadBytes('\n')
				if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
					write(out, v)
				}
				if _, werr := pw.Write(line); werr != nil || err != nil {
					pw.CloseWithError(err)
					return
				}
			}
		}()
		resp.Body = pr
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if len(b) > 0 {
			write(in, b)
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The same tool of the npm server-everything over streamable HTTP
// ("type": "http"), with a proxy between the router and the child that
// records what goes by: the router's own POSTs in the child's session
// run the child's task, polled to its result; the elicitation of a task
// that asks for input, sent on the event stream answering such a POST,
// reaches the client and the task goes on with its answer; a plain call
// is bridged;
// a router task cancelled mid-run sends the child tasks/cancel, which
// the child answers with its task cancelled; and no id of the child's
// tasks reaches the client.
func TestAChildsOwnTaskOverStreamableHTTP(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "child-in.jsonl"), filepath.Join(dir, "child-out.jsonl")
	via := tap(t, everythingOverHTTP(t), in, out)
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"ev": map[string]any{"type": "http", "url": via + "/mcp"}}})
	c := startTaskClientWith(t, []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir,
		"EVOKORE_HOME=" + filepath.Join(dir, "home"), "EVOKORE_MCP_CONFIG_PATH=" + cfg, "EVOKORE_TOOL_DISCOVERY_MODE=legacy"},
		"stdio", testutil.Evokore(t), "serve")
	ownTaskThroughTheRouter(t, c, in, out, true)
}

// everythingOverHTTP starts the npm server-everything serving
// streamable HTTP on a free port and returns its base URL once it
// listens.
func everythingOverHTTP(t *testing.T) string {
	t.Helper()
	port := freePort(t)
	child := exec.Command("node", testutil.NPMServer(t, "server-everything"), "streamableHttp")
	child.Env = append(os.Environ(), "PORT="+port)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = child.Process.Kill()
		_ = child.Wait()
	})
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if nc, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			nc.Close()
			return "http://127.0.0.1:" + port
		}
	}
	t.Fatal("the server-everything never listened")
	return ""
}

// listedSupport is the taskSupport tool is listed with, once the router
// lists it (the child boots after the client's handshake).
func listedSupport(do func(string, map[string]any) (json.RawMessage, string), tool string) string {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		raw, _ := do("tools", nil)
		var listed struct {
			Tools []struct {
				Name      string
				Execution struct{ TaskSupport string }
			}
		}
		_ = json.Unmarshal(raw, &listed)
		for _, tl := range listed.Tools {
			if tl.Name == tool {
				return tl.Execution.TaskSupport
			}
		}
	}
	return "not listed"
}

// childCancelled checks, in the child's logs, that the child was asked
// tasks/cancel for its task id and showed it cancelled.
func childCancelled(t *testing.T, in, out, id string) {
	t.Helper()
	var shown, asked []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		_, statuses, _ := childLog(t, out)
		_, _, methods := childLog(t, in)
		shown, asked = statuses[id], methods[id]
		if len(shown) > 0 && shown[len(shown)-1] == "cancelled" {
			break
		}
	}
	if len(shown) == 0 || shown[len(shown)-1] != "cancelled" || !strings.Contains(strings.Join(asked, " "), "tasks/cancel") {
		t.Errorf("the child's task %s after the router's was cancelled: shown %v, asked %v", id, shown, asked)
	}
}

// ownTaskThroughTheRouter drives c, a client of the router that serves
// the npm server-everything as "ev", whose messages are logged to the
// files in and out: simulate-research-query (taskSupport "required") is
// listed as "optional"; called as a task, the router runs the child's
// own task and polls it to its result; when asks, a task that asks for
// input reaches the client's elicitation and goes on with its answer;
// called plainly, the router runs the child's task and answers the call
// with its result; a router task cancelled mid-run cancels the child's
// task (the child answers tasks/cancel with the task cancelled); and no
// id of the child's tasks reaches the client.
func ownTaskThroughTheRouter(t *testing.T, c *taskClient, in, out string, asks bool) {
	const tool = "ev_simulate-research-query"
	var seen []string // every reply the client got
	do := func(op string, fields map[string]any) (json.RawMessage, string) {
		raw, msg := c.do(op, fields)
		seen = append(seen, string(raw), msg)
		return raw, msg
	}

	support := listedSupport(do, tool)
	if support != "optional" {
		t.Errorf("%s is listed with taskSupport %q, want \"optional\" (the router bridges a plain call)", tool, support)
	}

	// As a task, polled to its end.
	task := c.start(tool, map[string]any{"topic": "tides"}, 0)
	seen = append(seen, task.TaskID)
	end, _ := c.await(task.TaskID, time.Minute, "completed", "failed", "cancelled")
	res, msg := do("result", map[string]any{"taskId": task.TaskID})
	if text := toolText(t, res); end.Status != "completed" || msg != "" || !strings.Contains(text, "# Research Report: tides") ||
		!strings.Contains(text, "Stage 4: Generating report ✓") {
		t.Fatalf("the task ended %+v: %s %s", end, res, msg)
	}

	if asks {
		seen = append(seen, taskThatAsks(t, c, tool)...)
	}

	// Plainly: the router runs the child's task and answers the call.
	res, msg = do("plain", map[string]any{"name": tool, "arguments": map[string]any{"topic": "reefs"}})
	if msg != "" || !strings.Contains(toolText(t, res), "# Research Report: reefs") {
		t.Fatalf("the plain call: %s %s", res, msg)
	}

	// Cancelled mid-run: the child's task is cancelled too.
	ids, _, _ := childLog(t, out)
	before := len(ids)
	stopped := c.start(tool, map[string]any{"topic": "storms"}, 0)
	seen = append(seen, stopped.TaskID)
	deadline := time.Now().Add(30 * time.Second)
	for len(ids) == before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		ids, _, _ = childLog(t, out)
	}
	if len(ids) == before {
		t.Fatal("the child made no task for the third call")
	}
	childID := ids[len(ids)-1]
	if st, msg := c.get(stopped.TaskID); msg != "" || st.Status != "working" {
		t.Fatalf("before the cancel: %+v %s", st, msg)
	}
	raw, msg := do("cancel", map[string]any{"taskId": stopped.TaskID})
	var cancelled taskState
	if msg != "" || json.Unmarshal(raw, &cancelled) != nil || cancelled.Status != "cancelled" {
		t.Fatalf("tasks/cancel: %s %s", raw, msg)
	}
	childCancelled(t, in, out, childID)

	// The client saw none of the child's task ids.
	ids, _, _ = childLog(t, out)
	if len(ids) < 3 {
		t.Errorf("the child made %d tasks for three calls: %v", len(ids), ids)
	}
	c.mu.Lock()
	for _, st := range c.statuses {
		seen = append(seen, st.TaskID)
	}
	c.mu.Unlock()
	all := strings.Join(seen, "\n")
	for _, id := range ids {
		if strings.Contains(all, id) {
			t.Errorf("the child's task id %s reached the client:\n%s", id, all)
		}
	}
}

// taskThatAsks runs tool as a task that asks for input
// (input_required): its elicitation reaches the client, named as the
// child's, and the task goes on with the answer (the client accepts the
// first choice). It returns what the client got.
func taskThatAsks(t *testing.T, c *taskClient, tool string) (seen []string) {
	asking := c.start(tool, map[string]any{"topic": "python", "ambiguous": true}, 0)
	seen = append(seen, asking.TaskID)
	end, _ := c.await(asking.TaskID, time.Minute, "completed", "failed", "cancelled")
	res, msg := c.do("result", map[string]any{"taskId": asking.TaskID})
	seen = append(seen, string(res), msg)
	if text := toolText(t, res); end.Status != "completed" || msg != "" || !strings.Contains(text, "**Clarification**: programming") {
		t.Errorf("the task that asked for input ended %+v: %s %s", end, res, msg)
	}
	c.mu.Lock()
	elicited := c.elicited
	c.mu.Unlock()
	if len(elicited) != 1 || !strings.Contains(string(elicited[0]), `The 'ev' server asks: The research query \"python\" could have multiple interpretations`) {
		t.Errorf("the elicitations the client got: %s", elicited)
	}
	for _, e := range elicited {
		seen = append(seen, string(e))
	}
	return seen
}
