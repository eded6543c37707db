package main_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// fastRouter is evokore over stdio with one fixture child "c" (its
// payload tools on), driven with raw JSON-RPC lines so that ids, ordering
// and pipelining are the test's to choose. Proxied calls take the fast
// path (package proxy's doc).
type fastRouter struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  <-chan []byte
	stderr *routertest.Buffer
}

func startFastRouter(t *testing.T, env ...string) *fastRouter {
	t.Helper()
	return startFastRouterWith(t, fastRouterOptions{childArgs: []string{"-payloads"}, readyTool: "c_big", buffered: true, env: env})
}

// fastRouterOptions vary the fixture child and how the router's output
// is read.
type fastRouterOptions struct {
	childArgs []string
	// readyTool is the tool whose listing says the child is up.
	readyTool string
	// buffered reads the router's output as it comes, thousands of
	// lines ahead of the test; otherwise a line is read from the pipe
	// only when the test asks for one, as a client that reads no more
	// than it handles (beyond a 1 MiB buffer).
	buffered bool
	env      []string
	// child holds more members of the child's config entry.
	child map[string]any
}

func startFastRouterWith(t *testing.T, o fastRouterOptions) *fastRouter {
	t.Helper()
	dir := t.TempDir()
	child := map[string]any{"command": testutil.FixtureServer(t), "args": o.childArgs}
	for k, v := range o.child {
		child[k] = v
	}
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"c": child}})
	cmd := exec.Command(testutil.Evokore(t), "serve")
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"), "EVOKORE_TOOL_DISCOVERY_MODE=legacy"}, o.env...)
	r := &fastRouter{cmd: cmd}
	buffer := 0
	if o.buffered {
		buffer = 4096
	}
	r.stdin, r.lines, r.stderr = routertest.StartLines(t, cmd, buffer)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("router stderr:\n%s", r.stderr.String())
		}
	})
	r.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fastpath-test","version":"1"}}}`)
	r.response(t)
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; ; n++ {
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":"list-%d","method":"tools/list"}`, n))
		if m := r.response(t); strings.Contains(string(m["result"]), `"`+o.readyTool+`"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listed\nstderr:\n%s", o.readyTool, r.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r
}

func (r *fastRouter) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.stdin, line+"\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// line is the router's next line, members raw.
func (r *fastRouter) line(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			t.Fatalf("the router closed stdout\nstderr:\n%s", r.stderr.String())
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not a JSON object: %.200q", line)
		}
		return m
	case <-time.After(60 * time.Second):
		t.Fatalf("no answer from the router\nstderr:\n%s", r.stderr.String())
	}
	return nil
}

// response is the next response; notifications are skipped.
func (r *fastRouter) response(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	for {
		if m := r.line(t); m["method"] == nil {
			return m
		}
	}
}

func (r *fastRouter) call(t *testing.T, id, tool, args string) map[string]json.RawMessage {
	t.Helper()
	r.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`)
	m := r.response(t)
	if string(m["id"]) != id {
		t.Fatalf("answer for id %s, want %s: %v", m["id"], id, m)
	}
	return m
}

type toolResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Resource struct {
			Blob []byte `json:"blob"`
		} `json:"resource"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

func resultOf(t *testing.T, m map[string]json.RawMessage) toolResult {
	t.Helper()
	if m["error"] != nil {
		t.Fatalf("error answer: %s", m["error"])
	}
	var res toolResult
	if err := json.Unmarshal(m["result"], &res); err != nil {
		t.Fatalf("result %.200s: %v", m["result"], err)
	}
	return res
}

func TestFastPathStringAndNumberIDs(t *testing.T) {
	r := startFastRouter(t)
	for _, id := range []string{`"abc-1"`, `7`, `-3`, `"evokore-fp-1"`, `9007199254740991`} {
		res := resultOf(t, r.call(t, id, "c_echo", `{"message":"hi `+strings.Trim(id, `"`)+`"}`))
		want := "Echo: hi " + strings.Trim(id, `"`)
		if len(res.Content) != 1 || res.Content[0].Text != want {
			t.Errorf("id %s: %+v, want %q", id, res, want)
		}
	}
}

func TestFastPathHugeResult(t *testing.T) {
	r := startFastRouter(t)
	const size = 10 << 20
	res := resultOf(t, r.call(t, `1`, "c_big", fmt.Sprintf(`{"bytes":%d}`, size)))
	if len(res.Content) != 1 || len(res.Content[0].Text) != size || strings.Trim(res.Content[0].Text, "x") != "" {
		t.Fatalf("want one text block of %d x's", size)
	}
	// The router is still in order after it.
	if res := resultOf(t, r.call(t, `2`, "c_echo", `{"message":"after"}`)); res.Content[0].Text != "Echo: after" {
		t.Errorf("after a huge result: %+v", res)
	}
}

func TestFastPathBinaryContent(t *testing.T) {
	r := startFastRouter(t)
	res := resultOf(t, r.call(t, `1`, "c_blob", `{"bytes":1024}`))
	if len(res.Content) != 1 || res.Content[0].Type != "resource" {
		t.Fatalf("want one resource block: %+v", res)
	}
	got := res.Content[0].Resource.Blob
	want := make([]byte, 1024)
	for i := range want {
		want[i] = byte(i)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("blob of %d bytes differs from the child's (%s…)", len(got), base64.StdEncoding.EncodeToString(got[:min(len(got), 16)]))
	}
}

func TestFastPathConcurrentCallsWithProgress(t *testing.T) {
	r := startFastRouter(t)
	tokens := []string{`"tok-a"`, `11`, `"tok-c"`, `12`}
	for i, tok := range tokens {
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"c_progress","arguments":{"steps":3},"_meta":{"progressToken":%s}}}`, 100+i, tok))
	}
	progress := map[string]int{}
	answered := map[string]string{}
	for len(answered) < len(tokens) || len(progress) < len(tokens) || !allAt(progress, 3) {
		m := r.line(t)
		switch {
		case string(m["method"]) == `"notifications/progress"`:
			var p struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			}
			_ = json.Unmarshal(m["params"], &p)
			progress[string(p.ProgressToken)]++
		case m["id"] != nil:
			answered[string(m["id"])] = resultOf(t, m).Content[0].Text
		}
	}
	for i, tok := range tokens {
		if got := answered[fmt.Sprint(100+i)]; got != "done 3 steps" {
			t.Errorf("call %d answered %q", 100+i, got)
		}
		if progress[tok] != 3 {
			t.Errorf("token %s got %d progress notifications, want 3", tok, progress[tok])
		}
	}
	if len(progress) != len(tokens) {
		t.Errorf("progress under unknown tokens: %v", progress)
	}
}

func allAt(m map[string]int, n int) bool {
	for _, v := range m {
		if v < n {
			return false
		}
	}
	return true
}

func TestFastPathCancellation(t *testing.T) {
	r := startFastRouter(t)
	r.send(t, `{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"c_slow","arguments":{"ms":600000}}}`)
	// Cancel once the child runs it: a call cancelled before it reached
	// the child has nothing to tell the child.
	for n := 0; ; n++ {
		m := r.call(t, fmt.Sprint(100000+n), "c_read_cancelled", `{"started":true}`)
		if resultOf(t, m).Content[0].Text == "started: 1" {
			break
		}
		if n > 3000 {
			t.Fatalf("the slow call never reached the child")
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"changed my mind"}}`)
	// The cancelled call ends at once, with the error the SDK path gives.
	if m := r.response(t); string(m["id"]) != `"slow-1"` || m["error"] == nil {
		t.Fatalf("want slow-1 ended with an error, got %v", m)
	}
	// The child learns of it: its count of cancelled calls goes to 1.
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; ; n++ {
		m := r.call(t, fmt.Sprint(n+1), "c_read_cancelled", `{}`)
		if resultOf(t, m).Content[0].Text == "cancelled: 1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child never saw the cancellation")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestFastPathChildDiesMidCall(t *testing.T) {
	r := startFastRouter(t)
	res := resultOf(t, r.call(t, `1`, "c_crash", `{}`))
	if !res.IsError || !strings.Contains(res.Content[0].Text, proxy.MsgDiedDuringCall("crash", "c")) {
		t.Fatalf("want the died-during-call error, got %+v", res)
	}
	// The child is restarted and calls work again.
	deadline := time.Now().Add(60 * time.Second)
	for n := 2; ; n++ {
		m := r.call(t, fmt.Sprint(n), "c_echo", `{"message":"back"}`)
		if m["error"] == nil && resultOf(t, m).Content[0].Text == "Echo: back" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child never came back: %v", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestFastPathTimeout(t *testing.T) {
	r := startFastRouter(t, "EVOKORE_PROXY_REQUEST_TIMEOUT_MS=300")
	res := resultOf(t, r.call(t, `1`, "c_slow", `{"ms":600000}`))
	if !res.IsError || res.Content[0].Text != proxy.MsgCallTimeout("slow", "c", 300*time.Millisecond) {
		t.Fatalf("want the timeout error, got %+v", res)
	}
	if res := resultOf(t, r.call(t, `2`, "c_echo", `{"message":"next"}`)); res.Content[0].Text != "Echo: next" {
		t.Errorf("after a timeout: %+v", res)
	}
}

func TestFastPathChildErrorObject(t *testing.T) {
	r := startFastRouter(t)
	m := r.call(t, `"e1"`, "c_rpcerror", `{"code":-32042,"message":"the child refuses"}`)
	var e struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(m["error"], &e); err != nil || e.Code != -32042 || e.Message != "the child refuses" {
		t.Fatalf("want the child's error object, got %v", m)
	}
}

func TestFastPathPipelinedThousandCalls(t *testing.T) {
	r := startFastRouter(t)
	const n = 1000
	var batch bytes.Buffer
	for i := range n {
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"c_echo","arguments":{"message":"m%d"}}}`+"\n", i+1, i+1)
	}
	go func() { _, _ = r.stdin.Write(batch.Bytes()) }()
	r.echoAnswers(t, n, func(id string) string { return "Echo: m" + id })
}

// echoAnswers reads n answers, in any order, each to another id, and
// checks each is the text echo gives for its id.
func (r *fastRouter) echoAnswers(t *testing.T, n int, echo func(id string) string) {
	t.Helper()
	seen := map[string]bool{}
	for len(seen) < n {
		m := r.response(t)
		id := string(m["id"])
		if seen[id] {
			t.Fatalf("id %s answered twice", id)
		}
		seen[id] = true
		if got, want := resultOf(t, m).Content[0].Text, echo(id); got != want {
			t.Fatalf("id %s answered %d bytes %.40q…, want %d bytes %.40q…", id, len(got), got, len(want), want)
		}
	}
}

// The arguments reach the child as the bytes the client wrote, spacing
// and number spelling included: nothing decoded and re-encoded them (the
// SDK's path compacts them).
func TestFastPathArgumentsReachTheChildAsSent(t *testing.T) {
	r := startFastRouter(t)
	args := `{ "b" : [1, 2 ,3.50], "n": 1e2, "s": "\u00e9" }`
	res := resultOf(t, r.call(t, `1`, "c_args", args))
	if len(res.Content) != 1 || res.Content[0].Text != args {
		t.Fatalf("the child received %+v, want %s", res.Content, args)
	}
}

// A client that writes all its calls before it reads any answer (a
// script piping a file in) is answered in full, even when the answers
// fill every pipe on the way and the child is single-threaded: the
// child then stops reading while its answers wait for the router, the
// router's writes to it block, and the router's answers wait for the
// client. The router must go on reading its input regardless, or the
// client, the router and the child wait on each other in a circle.
func TestFastPathClientThatWritesEverythingBeforeReading(t *testing.T) {
	r := startFastRouterWith(t, fastRouterOptions{childArgs: []string{"-sequential"}, readyTool: "c_echo"})
	const n = 200
	message := strings.Repeat("x", 20<<10)
	var batch bytes.Buffer
	for i := range n {
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"c_echo","arguments":{"message":"%s%d"}}}`+"\n", i+1, message, i+1)
	}
	written := make(chan error, 1)
	go func() {
		_, err := r.stdin.Write(batch.Bytes())
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the router stopped reading its input while its answers waited for the client: %d calls of %d KB not all written in 60 s", n, len(message)>>10)
	}
	r.echoAnswers(t, n, func(id string) string { return "Echo: " + message + id })
}

// A child's progress and log messages sent before its result reach the
// client before the result: MCP ends a call's progress with its answer,
// and over streamable HTTP nothing can follow it. The fast path takes the
// result off the child's output while the notifications before it still
// wait for their handlers.
func TestFastPathResultComesAfterItsNotifications(t *testing.T) {
	r := startFastRouterWith(t, fastRouterOptions{childArgs: []string{"-payloads"}, readyTool: "c_chatter", buffered: true})
	r.send(t, `{"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel","params":{"level":"debug"}}`)
	r.response(t)
	const steps = 20
	for call := range 5 {
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"c_chatter","arguments":{"steps":%d},"_meta":{"progressToken":"p%d"}}}`, call, steps, call))
		progress, logs := 0, 0
		for {
			m := r.line(t)
			if m["id"] != nil {
				if got := resultOf(t, m).Content[0].Text; got != fmt.Sprintf("chattered %d", steps) {
					t.Fatalf("call %d answered %q", call, got)
				}
				break
			}
			switch string(m["method"]) {
			case `"notifications/progress"`:
				progress++
			case `"notifications/message"`:
				logs++
			}
		}
		// The previous call's stragglers would be counted here, so a late
		// one shows too.
		if progress != steps || logs != steps {
			t.Fatalf("call %d: %d progress and %d log messages before its answer, want %d of each", call, progress, logs, steps)
		}
	}
}

// A child that stops reading its stdin (fastpath -deaf) ends no call by
// wedging it. The router's write of a request that no longer fits in the
// pipe gives up at the request timeout with the stopped-reading message;
// the client's cancel of a call waiting for the child is answered at
// once, although the notification to the child cannot be written; the
// router serves its native tools meanwhile; and the child is stopped and
// restarted as a crashed one would be.
func TestFastPathChildThatStopsReadingStdin(t *testing.T) {
	const timeout = time.Second
	r := startFastRouterWith(t, fastRouterOptions{childArgs: []string{"-deaf"}, readyTool: "c_deaf", buffered: true,
		env: []string{fmt.Sprintf("EVOKORE_PROXY_REQUEST_TIMEOUT_MS=%d", timeout.Milliseconds())}})
	pid := resultOf(t, r.call(t, `"pid"`, "c_pid", `{}`)).Content[0].Text
	r.send(t, `{"jsonrpc":"2.0","id":"deaf","method":"tools/call","params":{"name":"c_deaf","arguments":{},"_meta":{"progressToken":"deaf"}}}`)
	// The child says it stopped reading by a progress notification.
	for m := r.line(t); string(m["method"]) != `"notifications/progress"`; m = r.line(t) {
		if m["id"] != nil {
			t.Fatalf("an answer before the child stopped reading: %v", m)
		}
	}
	// Four times what a pipe holds: the write blocks until its bound,
	// once the pipe is full.
	r.send(t, `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"c_echo","arguments":{"message":"`+strings.Repeat("x", 256<<10)+`"}}}`)
	waitPipeFull(t, pid)
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"deaf","reason":"changed my mind"}}`)
	r.send(t, `{"jsonrpc":"2.0","id":"status","method":"tools/call","params":{"name":"proxy_server_status","arguments":{}}}`)
	answers := map[string]map[string]json.RawMessage{}
	var order []string
	for len(answers) < 3 {
		m := r.response(t)
		id, _ := strconv.Unquote(string(m["id"]))
		answers[id] = m
		order = append(order, id)
	}
	if answers["deaf"]["error"] == nil {
		t.Errorf("the cancelled call: want the cancellation error, got %v", answers["deaf"])
	}
	// Sent after the blocked write began, they are answered before it
	// gives up at the request timeout: the blocked write is answered last.
	if order[2] != "big" {
		t.Errorf("answers in order %v: the cancel or the native tool waited for the blocked write", order)
	}
	res := resultOf(t, answers["big"])
	if !res.IsError || res.Content[0].Text != proxy.MsgStoppedReading("echo", "c", timeout) {
		t.Errorf("the call that did not fit: %+v", res)
	}
	// The child is restarted (watched through the native status tool: a
	// proxied call failing while it restarts would put it in cooldown).
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; ; n++ {
		text := resultOf(t, r.call(t, fmt.Sprint(n), "proxy_server_status", `{}`)).Content[0].Text
		if st := routertest.DecodeJSON[routertest.ServerStatus](t, text); st.Servers[0].Status == "connected" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child never came back: %s\nstderr:\n%s", text, r.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if now := resultOf(t, r.call(t, `"pid2"`, "c_pid", `{}`)).Content[0].Text; now == pid {
		t.Errorf("the child still runs as %s", pid)
	}
	if res := resultOf(t, r.call(t, `"back"`, "c_echo", `{"message":"back"}`)); res.IsError || res.Content[0].Text != "Echo: back" {
		t.Errorf("after the restart: %+v", res)
	}
}
