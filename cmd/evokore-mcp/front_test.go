//go:build unix

package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/handoff"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// session is a raw line client of one process.
type session struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  <-chan []byte
	stderr *routertest.Buffer
}

func start(t *testing.T, bin string, env []string, args ...string) *session {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home")}, env...)
	s := &session{t: t, cmd: cmd}
	s.in, s.lines, s.stderr = routertest.StartLines(t, cmd, 64)
	return s
}

func (s *session) send(frames ...string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, strings.Join(frames, "\n")+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// next returns the next message that is not a notification.
func (s *session) next() (string, map[string]any) {
	s.t.Helper()
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("stdout closed; stderr:\n%s", s.stderr)
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				s.t.Fatalf("not JSON on stdout: %q", line)
			}
			if _, ok := m["id"]; !ok {
				continue
			}
			return string(line), m
		case <-time.After(30 * time.Second):
			s.t.Fatalf("no answer; stderr:\n%s", s.stderr)
		}
	}
}

const initialize = `{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"front-test","version":"1"}}}`

// TestTheFrontAnswersAndBecomesTheRouter: evokore-mcp answers initialize
// with the bytes evokore itself gives, then is evokore (same process) and
// serves the session on; the initialize is answered exactly once and the
// router finds nothing to warn about in the hand-off.
func TestTheFrontAnswersAndBecomesTheRouter(t *testing.T) {
	front, router := testutil.EvokoreMCP(t), testutil.Evokore(t)
	for _, id := range []string{"1", `"init-1"`} {
		direct := start(t, router, nil)
		direct.send(fmt.Sprintf(initialize, id))
		want, _ := direct.next()

		s := start(t, front, nil)
		s.send(fmt.Sprintf(initialize, id))
		got, _ := s.next()
		if got != want {
			t.Fatalf("id %s: the front answered\n%s\nevokore answers\n%s", id, got, want)
		}
		if runtime.GOOS == "linux" {
			// While the process execs, the link may briefly not resolve.
			exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", s.cmd.Process.Pid))
			for deadline := time.Now().Add(10 * time.Second); exe != router && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
				exe, _ = os.Readlink(fmt.Sprintf("/proc/%d/exe", s.cmd.Process.Pid))
			}
			if exe != router {
				t.Errorf("process %d runs %q, not %s", s.cmd.Process.Pid, exe, router)
			}
		}
		s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
		// Answers may come in any order (the SDK serves requests
		// concurrently); a second answer to initialize would be one of
		// these two.
		byID := map[any]map[string]any{}
		for range 2 {
			line, m := s.next()
			if _, dup := byID[m["id"]]; dup || (m["id"] != float64(2) && m["id"] != float64(3)) {
				t.Fatalf("after the hand-off, an answer to a request not sent since, or twice: %.300s", line)
			}
			byID[m["id"]] = m
		}
		tools, _ := byID[float64(2)]["result"].(map[string]any)["tools"].([]any)
		if len(tools) < 10 || byID[float64(3)]["result"] == nil {
			t.Fatalf("after the hand-off, tools/list and ping got %v", byID)
		}
		s.in.Close()
		for line := range s.lines {
			t.Errorf("more output after the client left: %.200s", line)
		}
		if err := s.cmd.Wait(); err != nil {
			t.Errorf("exit: %v; stderr:\n%s", err, s.stderr)
		}
		if e := s.stderr.String(); strings.Contains(e, "differs") || strings.Contains(e, handoff.Env) || !strings.Contains(e, "router running on stdio") {
			t.Errorf("stderr:\n%s", e)
		}
	}
}

// TestFirstFramesTheFrontLeavesToTheRouter: a first frame the front does
// not answer is read and answered by the router, once, as if the client
// had started evokore itself.
func TestFirstFramesTheFrontLeavesToTheRouter(t *testing.T) {
	front := testutil.EvokoreMCP(t)
	for name, c := range map[string]struct {
		frame, id string
		code      float64
	}{
		"an initialize with a 16-digit id":          {fmt.Sprintf(initialize, "1234567890123456"), "1234567890123456", 0},
		"a ping first":                              {`{"jsonrpc":"2.0","id":"p","method":"ping"}`, "p", 0},
		"an initialize longer than the front reads": {strings.Replace(fmt.Sprintf(initialize, `"long"`), `"front-test"`, `"`+strings.Repeat("x", handoff.MaxPrelude+1000)+`"`, 1), "long", 0},
		"garbage": {`this is not json`, "<nil>", -32700},
	} {
		t.Run(name, func(t *testing.T) {
			s := start(t, front, nil)
			s.send(c.frame)
			line, m := s.next()
			if fmt.Sprint(m["id"]) != c.id && fmt.Sprintf("%.0f", m["id"]) != c.id {
				t.Fatalf("answer %s", line)
			}
			if errObj, _ := m["error"].(map[string]any); c.code != 0 && (errObj == nil || errObj["code"] != c.code) {
				t.Fatalf("answer %s, want error %v", line, c.code)
			}
			if c.code == 0 && m["result"] == nil {
				t.Fatalf("answer %s, want a result", line)
			}
			s.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
			if line, m := s.next(); m["id"] != "after" {
				t.Fatalf("next answer %s (a duplicate?)", line)
			}
			if e := s.stderr.String(); strings.Contains(e, "differs") || strings.Contains(e, "Ignoring "+handoff.Env) {
				t.Errorf("stderr:\n%s", e)
			}
		})
	}
}

// TestServeIsOptional: `evokore-mcp serve --flags` is `evokore-mcp
// --flags`, as `evokore serve` is evokore's stdio server.
func TestServeIsOptional(t *testing.T) {
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "elsewhere.json", map[string]any{"servers": map[string]any{}})
	s := start(t, testutil.EvokoreMCP(t), nil, "serve", "--config", cfg)
	s.send(fmt.Sprintf(initialize, "1"), `{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if line, m := s.next(); m["result"] == nil {
		t.Fatalf("initialize: %s", line)
	}
	if line, m := s.next(); m["id"] != float64(2) || m["result"] == nil {
		t.Fatalf("ping: %s; stderr:\n%s", line, s.stderr)
	}
}

// TestASilentClientStillGetsTheRouter: a client that starts the front and
// writes nothing for a while is served by the router when it speaks.
func TestASilentClientStillGetsTheRouter(t *testing.T) {
	s := start(t, testutil.EvokoreMCP(t), nil)
	time.Sleep(300 * time.Millisecond)
	s.send(fmt.Sprintf(initialize, "1"))
	if line, m := s.next(); m["result"] == nil {
		t.Fatalf("answer %s", line)
	}
}

// TestWithoutTheRouterTheFrontSaysSoAndAnswersNothing: a client must not
// be told the server is ready when there is none to serve it.
func TestWithoutTheRouterTheFrontSaysSoAndAnswersNothing(t *testing.T) {
	s := start(t, testutil.EvokoreMCP(t), []string{"EVOKORE_BIN=" + filepath.Join(t.TempDir(), "missing")})
	s.send(fmt.Sprintf(initialize, "1"))
	for line := range s.lines {
		t.Errorf("stdout: %s", line)
	}
	err := s.cmd.Wait()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		t.Fatalf("exit %v", err)
	}
	if e := s.stderr.String(); !strings.Contains(e, "EVOKORE_BIN") {
		t.Errorf("stderr: %s", e)
	}
}

// TestTheHandOffDoesNotReachTheChildren: a child that inherits the whole
// environment does not see the front's variable, and a variable set by
// whoever started the front is not taken for the front's.
func TestTheHandOffDoesNotReachTheChildren(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"c0": map[string]any{"command": testutil.FixtureServer(t), "inheritEnv": true},
	}})
	ctx := context.Background()
	cmd := exec.Command(testutil.EvokoreMCP(t))
	cmd.Dir = dir
	forged := handoff.Encode([]byte(`{"jsonrpc":"2.0","id":99,"method":"ping"}`+"\n"), nil)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"), handoff.Env + "=" + forged}
	stderr := &routertest.Buffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "front-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr)
	}
	defer cs.Close()
	var res *mcp.CallToolResult
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "c0_env", Arguments: map[string]any{"name": handoff.Env}})
		if err == nil && !res.IsError {
			break
		}
	}
	if err != nil || res.IsError {
		t.Fatalf("c0_env: %v %v; stderr:\n%s", err, res, stderr)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != handoff.Env+" is unset" {
		t.Errorf("the child sees %q", got)
	}
	if init := cs.InitializeResult(); init == nil || init.ServerInfo.Name != "evokore" {
		t.Errorf("initialize result %+v", init)
	}
}
