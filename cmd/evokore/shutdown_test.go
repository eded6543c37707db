package main_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// signalOnProgress sends SIGTERM to the router on the given progress
// steps of a call: a step proves the call is running at the child.
func signalOnProgress(r **router, steps ...int) *mcp.ClientOptions {
	var n atomic.Int32
	return &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		step := int(n.Add(1))
		for _, s := range steps {
			if s == step {
				_ = (*r).cmd.Process.Signal(syscall.SIGTERM)
			}
		}
	}}
}

// SIGTERM during a call lets the call finish and answer, then the router
// exits cleanly. The router's stdout is read raw: the go-sdk's command
// client can report the end of the process before the last line it read.
func TestSIGTERMAnswersTheCallInFlight(t *testing.T) {
	dir := t.TempDir()
	fx := testutil.FixtureServer(t)
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"one": map[string]any{"command": fx}}})
	cmd := exec.Command(testutil.Evokore(t), "serve")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"), "EVOKORE_TOOL_DISCOVERY_MODE=legacy"}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr := &routertest.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	send := func(line string) { _, _ = io.WriteString(stdin, line+"\n") }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	routertest.WaitFor(t, "the child to boot", func() bool { return strings.Contains(stderr.String(), "Proxy bootstrap complete") })
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"one_progress","arguments":{"steps":60},"_meta":{"progressToken":"p"}}}`)
	sc := bufio.NewScanner(stdout)
	signalled, answered := false, ""
	for sc.Scan() {
		line := sc.Text()
		if !signalled && strings.Contains(line, "notifications/progress") {
			signalled = true
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
		if strings.HasPrefix(line, `{"jsonrpc":"2.0","id":2,`) {
			answered = line
		}
	}
	if !signalled || !strings.Contains(answered, "done 60 steps") {
		t.Errorf("signalled %v; the call's answer: %q\n%s", signalled, answered, stderr.String())
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("router exit after SIGTERM: %v", err)
	}
}

// A second signal ends the router at once, whatever is still running: a
// graceful exit would have status 0 after the shutdown grace.
func TestSecondSignalEndsTheRouter(t *testing.T) {
	var r *router
	r = launchRouter(t, signalOnProgress(&r, 1), defaultServers)
	pids := r.childPids(t)
	params := &mcp.CallToolParams{Name: "one_progress", Arguments: map[string]any{"steps": 100000}}
	params.SetProgressToken("t2")
	done := make(chan error, 1)
	go func() {
		_, err := r.cs.CallTool(context.Background(), params)
		done <- err
	}()
	routertest.WaitFor(t, "the first signal to be taken", func() bool {
		return strings.Contains(r.stderr.String(), "[EVOKORE] Shutting down")
	})
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-done; err == nil {
		t.Error("the endless call answered although the router was ended")
	}
	_ = r.cs.Close() // the transport reaps the router
	if ws, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Errorf("router exit after two signals: %v, want death by the second signal", r.cmd.ProcessState)
	}
	routertest.WaitGone(t, 5*time.Second, pids...)
}
