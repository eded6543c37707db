package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// pipedScript is what `printf '...' | evokore serve` sends: three
// requests and the end of input right behind them.
const pipedScript = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"proxy_server_status","arguments":{}}}
`

// answers runs a server over the piped script and returns the ids of the
// responses it wrote before exiting.
func answers(t *testing.T, cmd *exec.Cmd) []float64 {
	t.Helper()
	cmd.Stdin = bytes.NewReader([]byte(pipedScript))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var ids []float64
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m struct {
			ID    *float64        `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != nil && m.Error == nil {
			ids = append(ids, *m.ID)
		}
	}
	return ids
}

// Every request read before the end of input is answered before exit.
func TestPipedRequestsAreAllAnsweredAtEOF(t *testing.T) {
	bin := testutil.Evokore(t)
	dir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home")}
	runs := 100
	if testing.Short() {
		runs = 10
	}
	complete := 0
	for i := range runs {
		cmd := exec.Command(bin, "serve")
		cmd.Dir, cmd.Env = dir, env
		ids := answers(t, cmd)
		slices.Sort(ids) // answers may come in any order
		if slices.Equal(ids, []float64{1, 2, 3}) {
			complete++
		} else if complete == i {
			t.Logf("run %d answered ids %v", i, ids)
		}
	}
	if complete != runs {
		t.Errorf("%d of %d runs answered all three requests", complete, runs)
	}
}

// The reference server answers the same script the same way: this is
// what clients expect of a stdio server.
func TestReferenceServerAnswersPipedRequests(t *testing.T) {
	script := testutil.NPMServer(t, "server-everything")
	cmd := exec.Command("node", script, "stdio")
	ids := answers(t, cmd)
	// The reference server has no proxy_server_status: ids 1 and 2 answer
	// with results, 3 with an error.
	if len(ids) < 2 || ids[0] != 1 || ids[1] != 2 {
		t.Errorf("server-everything answered %v", ids)
	}
}

// A client that left (closed stdin and stopped reading stdout) does not
// keep the router and its children alive for the length of a hung call:
// the router notices that nobody reads its answers, cancels the call and
// exits. The bound below is generous; without the check it waits for the
// per-call timeout (60 s).
func TestAClientThatLeftIsNotWaitedForOnAHungCall(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"one": map[string]any{"command": testutil.FixtureServer(t), "args": []string{"-pidfile", filepath.Join(dir, "one.pid")}},
	}})
	cmd := exec.Command(testutil.Evokore(t), "serve")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"), "EVOKORE_TOOL_DISCOVERY_MODE=legacy"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = outW
	stderr := &routertest.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan []byte)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- slices.Clone(sc.Bytes())
		}
		close(lines)
	}()
	send := func(frame string) {
		t.Helper()
		if _, err := io.WriteString(stdin, frame+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// answer waits for the answer to id and returns its first text.
	answer := func(id int) string {
		t.Helper()
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("stdout ended before answer %d\n%s", id, stderr.String())
				}
				var m struct {
					ID     int `json:"id"`
					Result struct {
						Content []struct{ Text string } `json:"content"`
					} `json:"result"`
				}
				if json.Unmarshal(line, &m) == nil && m.ID == id {
					if len(m.Result.Content) == 0 {
						return string(line)
					}
					return m.Result.Content[0].Text
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("no answer %d\n%s", id, stderr.String())
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"leaver","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	answer(1)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"one_slow","arguments":{"ms":600000}}}`)
	// The hung call has reached the child once the child says so.
	for id := 3; ; id++ {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"one_read_cancelled","arguments":{"started":true}}}`, id))
		if got := answer(id); got == "started: 1" {
			break
		} else if id > 200 {
			t.Fatalf("the slow call never started: %s\n%s", got, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, err := os.ReadFile(filepath.Join(dir, "one.pid"))
	child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || child <= 0 {
		t.Fatalf("child pid: %v %q", err, b)
	}
	t.Cleanup(func() {
		if procgroup.Alive(child) {
			_ = syscall.Kill(child, syscall.SIGKILL)
		}
	})

	// The client exits: both of its ends close.
	stdin.Close()
	outR.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("the router still runs 20 s after its client left\n%s", stderr.String())
	}
	routertest.WaitGone(t, 10*time.Second, child)
}
