package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// rawRouter is an evokore process driven frame by frame on its stdio, the
// way a broken or hostile client would drive it.
type rawRouter struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  <-chan []byte
	stderr *routertest.Buffer
}

func startRawRouter(t *testing.T) *rawRouter {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(testutil.Evokore(t), "serve")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home")}
	r := &rawRouter{cmd: cmd}
	r.stdin, r.lines, r.stderr = routertest.StartLines(t, cmd, 16)
	return r
}

func (r *rawRouter) send(t *testing.T, frame []byte) {
	t.Helper()
	if _, err := r.stdin.Write(append(frame, '\n')); err != nil {
		t.Fatalf("write to the router: %v\nstderr:\n%s", err, r.stderr.String())
	}
}

// next is the router's next response on stdout, decoded; notifications
// it sends meanwhile are skipped. The deadline only guards against a
// hang; nothing is asserted about speed.
func (r *rawRouter) next(t *testing.T) map[string]any {
	t.Helper()
	for {
		if m := r.nextLine(t); m["method"] == nil {
			return m
		}
	}
}

func (r *rawRouter) nextLine(t *testing.T) map[string]any {
	t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			_ = r.cmd.Wait()
			t.Fatalf("the router closed stdout (exit %v)\nstderr:\n%s", r.cmd.ProcessState, r.stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("the router wrote a line that is not a JSON object: %q", line[:min(len(line), 200)])
		}
		return m
	case <-time.After(60 * time.Second):
		t.Fatalf("no answer from the router\nstderr:\n%s", r.stderr.String())
	}
	return nil
}

func TestBadFramesAreAnsweredAndTheRouterKeepsServing(t *testing.T) {
	r := startRawRouter(t)
	r.send(t, []byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	if m := r.next(t); m["id"] != "init" || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send(t, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))

	deep := strings.Repeat(`{"a":`, 1000) + `1` + strings.Repeat(`}`, 1000)
	huge := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nav_get_map","arguments":{"path":"` + strings.Repeat("a", 17<<20) + `"}}}`
	cases := []struct {
		name  string
		frame string
		code  float64
		id    any // nil: the answer's id must be JSON null
	}{
		{"malformed JSON", `{"jsonrpc":"2.0",,}`, -32700, nil},
		{"not JSON at all", `hello router`, -32700, nil},
		{"truncated object", `{"jsonrpc":"2.0","id":1,"method":"tools/list"`, -32700, nil},
		{"lone closing brace", `}`, -32700, nil},
		{"two objects on one line", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, -32700, nil},
		{"trailing garbage", `{"jsonrpc":"2.0","id":4,"method":"tools/list"} trailing`, -32700, nil},
		{"NUL bytes", "\x00\x00\x00", -32700, nil},
		{"byte order mark", "\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, -32700, nil},
		{"invalid UTF-8", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nav_get_map","arguments":{"path":"/tmp/` + "\xff\xfe" + `"}}}`, -32700, 6.0},
		{"bare number", `42`, -32600, nil},
		{"bare string", `"tools/list"`, -32600, nil},
		{"bare true", `true`, -32600, nil},
		{"bare null", `null`, -32600, nil},
		{"empty batch", `[]`, -32600, nil},
		{"batch", `[{"jsonrpc":"2.0","id":8,"method":"tools/list"},{"jsonrpc":"2.0","id":9,"method":"tools/list"}]`, -32600, nil},
		{"batch of scalars", `[1,2,3]`, -32600, nil},
		{"frame over 16 MB", huge, -32603, nil},
		{"arguments nested 1,000 deep", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"nav_get_map","arguments":{"path":` + deep + `}}}`, -32600, 10.0},
		{"id beyond 2^53", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}`, -32600, nil},
		{"id 1e400", `{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}`, -32600, nil},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, -32600, nil},
		{"object id", `{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}`, -32600, nil},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, -32600, nil},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":11,"method":"tools/list"}`, -32600, 11.0},
		{"no jsonrpc member", `{"id":12,"method":"tools/list"}`, -32600, 12.0},
		{"no method", `{"jsonrpc":"2.0","id":13}`, -32600, 13.0},
		{"method not a string", `{"jsonrpc":"2.0","id":14,"method":42}`, -32600, 14.0},
		{"params a string", `{"jsonrpc":"2.0","id":15,"method":"tools/list","params":"all"}`, -32600, 15.0},
		{"method and result", `{"jsonrpc":"2.0","id":16,"method":"tools/list","result":{}}`, -32600, 16.0},
		{"error member not an object", `{"jsonrpc":"2.0","id":17,"error":"boom"}`, -32600, 17.0},
		{"duplicate id member", `{"jsonrpc":"2.0","id":18,"id":19,"method":"tools/list"}`, -32600, nil},
		{"bad notification", `{"jsonrpc":"2.0","method":["x"]}`, -32600, nil},
	}
	next := 1000
	for _, c := range cases {
		r.send(t, []byte(c.frame))
		m := r.next(t)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != c.code || m["id"] != c.id || m["jsonrpc"] != "2.0" {
			t.Errorf("%s: answer %v; want error %v with id %v", c.name, m, c.code, c.id)
		} else if msg, _ := e["message"].(string); msg == "" {
			t.Errorf("%s: the error says nothing", c.name)
		}
		if _, has := m["id"]; !has {
			t.Errorf("%s: the answer has no id member", c.name)
		}
		next++
		r.send(t, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, next))
		if m := r.next(t); m["id"] != float64(next) || m["result"] == nil {
			t.Fatalf("after %s, tools/list answered %v", c.name, m)
		}
	}

	// Frames the router must not answer leave it serving too: a blank
	// line, and a response to a request it never sent.
	r.send(t, []byte("   \r"))
	r.send(t, []byte(`{"jsonrpc":"2.0","id":"never-sent","result":{}}`))
	// A huge number inside otherwise valid arguments is the tool's
	// business: the call is answered with its id.
	r.send(t, []byte(`{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"nav_read_anchor","arguments":{"path":"/nonexistent","anchor_id":"a","lines_before":1e400}}}`))
	if m := r.next(t); m["id"] != "big" {
		t.Fatalf("a call with a huge number was answered %v", m)
	}
	r.send(t, []byte(`{"jsonrpc":"2.0","id":"last","method":"tools/list"}`))
	if m := r.next(t); m["id"] != "last" || m["result"] == nil {
		t.Fatalf("final tools/list: %v", m)
	}

	// Each rejection is explained on stderr.
	stderr := r.stderr.String()
	for _, want := range []string{"-32700", "-32600", "-32603", "batch", "exceeds"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not mention %q:\n%s", want, stderr)
		}
	}
	if err := r.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	for line := range r.lines {
		if !bytes.Contains(line, []byte(`"method"`)) {
			t.Errorf("the router answered something more: %s", line)
		}
	}
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("the router did not exit cleanly on stdin EOF: %v", err)
	}
}
