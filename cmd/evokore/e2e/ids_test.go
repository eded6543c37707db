package e2e_test

import (
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
	"testing"
	"time"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A notifications/cancelled sent as a request (with an id) cancels
// nothing and is answered with an error, as the SDK answers it; a request
// reusing the id of a proxied call still running ("a" and "\u0061" are
// one id) is refused and the call still gets its own answer, even when
// the input ends right behind them.
func TestRequestIDsOfProxiedCallsOverStdio(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"c": map[string]any{"command": testutil.FixtureServer(t), "args": []string{}},
	}})
	cmd := exec.Command(testutil.Evokore(t), "serve")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"), "EVOKORE_TOOL_DISCOVERY_MODE=legacy"}
	stdin, lines, stderr := routertest.StartLines(t, cmd, 0)
	send := func(frame string) {
		t.Helper()
		if _, err := io.WriteString(stdin, frame+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// The router's end-of-input wait is the per-call timeout and a second
	// (61 s): everything must be answered, and the router gone, well
	// before it.
	deadline := time.After(30 * time.Second)
	next := func() ([]byte, bool) {
		t.Helper()
		select {
		case line, ok := <-lines:
			return line, ok
		case <-deadline:
			t.Fatalf("not answered before the drain deadline\n%s", stderr.String())
			return nil, false
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// Waits for the answer to id, skipping notifications.
	answerTo := func(id string) []byte {
		t.Helper()
		for {
			line, ok := next()
			if !ok {
				t.Fatalf("stdout ended before answer %s\n%s", id, stderr.String())
			}
			if bytes.Contains(line, []byte(`"id":`+id+`,`)) {
				return line
			}
		}
	}
	answerTo("0")
	// The child's tools are the fast path's once they are listed.
	for i := 100; ; i++ {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"c_read_cancelled","arguments":{}}}`, i))
		if bytes.Contains(answerTo(strconv.Itoa(i)), []byte("cancelled: 0")) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"c_slow","arguments":{"ms":1000}}}`)
	send(`{"jsonrpc":"2.0","id":9,"method":"notifications/cancelled","params":{"requestId":1}}`)
	send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"c_slow","arguments":{"ms":5000}}}`)
	send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nosuch"}}`)
	send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"c_slow","arguments":{"ms":5000}}}`)
	send(`{"jsonrpc":"2.0","id":"\u0061","method":"tools/call","params":{"name":"nosuch"}}`)
	stdin.Close()

	type answer struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Result *struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	var results, errs []string
	for {
		line, ok := next()
		if !ok {
			break
		}
		var a answer
		if err := json.Unmarshal(line, &a); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if a.Method != "" {
			continue // a notification
		}
		id := string(a.ID)
		if id == "" {
			id = "null"
		}
		switch {
		case a.Result != nil && len(a.Result.Content) > 0:
			results = append(results, id+" "+a.Result.Content[0].Text)
		case a.Error != nil:
			errs = append(errs, id)
			if a.Error.Code != -32600 {
				t.Errorf("%s answered %s", id, line)
			}
		default:
			t.Errorf("unexpected line %s", line)
		}
	}
	slices.Sort(results)
	slices.Sort(errs)
	if want := []string{`"a" slept 5000ms`, `1 slept 1000ms`, `5 slept 5000ms`}; !slices.Equal(results, want) {
		t.Errorf("results %q, want %q\n%s", results, want, stderr.String())
	}
	// The cancellation with an id is answered under it; a reused id is
	// refused with a null id, as the SDK refuses one, so that the error
	// is not taken for the running call's answer.
	if want := []string{"9", "null", "null"}; !slices.Equal(errs, want) {
		t.Errorf("errors for %q, want %q\n%s", errs, want, stderr.String())
	}
	if strings.Contains(stderr.String(), "still unanswered") {
		t.Errorf("the router waited for requests at the end of input\n%s", stderr.String())
	}
}
