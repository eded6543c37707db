package httpsession_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/httpsession"
	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// post sends one JSON-RPC message over streamable HTTP, of a session
// when sid is set, else of the sessionless protocol with its headers and
// _meta; it returns the response's content type and body.
func post(t *testing.T, url, sid, body string, header map[string]string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// statelessCall is a 2026-07-28 tools/call of tool with args and the
// headers that era requires.
func statelessCall(id int, tool, args string) (string, map[string]string) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{%q:"2026-07-28",%q:{}}}}`,
		id, tool, args, mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities)
	return body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
}

// A proxied call over HTTP is answered without the SDK: as one plain JSON
// response to a sessionless (2026-07-28) request, with its resultType,
// and to a 2025-11-25 session as a resumable stream of two events (a
// priming event, then the result), exactly the result the SDK's path
// gives; a call that asks for progress gets its
// progress on an event stream; a session's call is cancelled by the
// client's notifications/cancelled and the child hears of it.
func TestProxiedCallsOverHTTPAnswerPlainJSON(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	h.Server.StartChildren(nil)
	h.Booted()
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)

	// The sessionless era.
	body, hdr := statelessCall(1, "fx_echo", `{"message":"plain"}`)
	code, ctype, got := post(t, ts.URL, "", body, hdr)
	if code != http.StatusOK || ctype != "application/json" {
		t.Fatalf("sessionless call: %d %s %s", code, ctype, got)
	}
	var resp struct {
		ID     int `json:"id"`
		Result struct {
			ResultType string `json:"resultType"`
			Content    []struct{ Text string }
		}
	}
	if err := json.Unmarshal([]byte(got), &resp); err != nil || resp.ID != 1 || resp.Result.ResultType != "complete" ||
		len(resp.Result.Content) != 1 || resp.Result.Content[0].Text != "Echo: plain" {
		t.Errorf("sessionless answer: %s", got)
	}
	// The fixture speaks both eras, so this call went to its connection of
	// the new era, whose results name the child; the client's answer names
	// no server but evokore.
	if strings.Contains(got, "serverInfo") {
		t.Errorf("the child's serverInfo reached the client: %s", got)
	}
	// A header that disagrees with the call goes the SDK's way: refused.
	hdr["Mcp-Name"] = "fx_other"
	if code, _, got := post(t, ts.URL, "", body, hdr); code != http.StatusBadRequest {
		t.Errorf("Mcp-Name naming another tool: %d %s", code, got)
	}

	// A session of the 2025-11-25 era.
	c := mcp.NewClient(&mcp.Implementation{Name: "fast", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, sessionEra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	// A 2025-11-25 session gets a resumable stream: a priming event, then
	// the answer, which a GET with the priming event's id replays.
	code, ctype, got = post(t, ts.URL, cs.ID(), `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"fx_echo","arguments":{"message":"s"}}}`, nil)
	want := `{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"Echo: s"}]}}`
	events := strings.Split(strings.TrimSpace(got), "\n\n")
	if code != http.StatusOK || ctype != "text/event-stream" || len(events) != 2 ||
		!strings.HasPrefix(events[0], "event: prime\nid: ") || !strings.HasSuffix(events[1], "\ndata: "+want) {
		t.Fatalf("session call: %d %s %q", code, ctype, got)
	}
	primed := strings.TrimPrefix(strings.Split(events[0], "\n")[1], "id: ")
	req, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", primed)
	resumed, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	replayed, _ := io.ReadAll(resumed.Body)
	resumed.Body.Close()
	if !strings.Contains(string(replayed), "data: "+want) {
		t.Errorf("resumed after %s: %d %q", primed, resumed.StatusCode, replayed)
	}
	// The same call through the SDK client reads the same result.
	if text := routertest.Text(routertest.Call(t, cs, "fx_echo", map[string]any{"message": "s"})); text != "Echo: s" {
		t.Errorf("SDK client: %q", text)
	}

	// Progress needs a stream: the call is the SDK's, answered as events.
	code, ctype, got = post(t, ts.URL, cs.ID(), `{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"fx_progress","arguments":{"steps":2},"_meta":{"progressToken":"tok"}}}`, nil)
	if code != http.StatusOK || ctype != "text/event-stream" || !strings.Contains(got, "notifications/progress") {
		t.Errorf("call with progress: %d %s %s", code, ctype, got)
	}

	// Cancelled by the client while the child works on it.
	done := make(chan string, 1)
	go func() {
		_, _, got := post(t, ts.URL, cs.ID(), `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"fx_slow","arguments":{"ms":60000}}}`, nil)
		done <- got
	}()
	waitFor(t, func() bool {
		return strings.Contains(routertest.Text(routertest.Call(t, cs, "fx_read_cancelled", map[string]any{"started": true})), "started: 1")
	})
	if code, _, got := post(t, ts.URL, cs.ID(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77,"reason":"user"}}`, nil); code != http.StatusAccepted {
		t.Errorf("cancellation: %d %s", code, got)
	}
	select {
	case got := <-done:
		if !strings.Contains(got, `"id":77`) {
			t.Errorf("the cancelled call answered %s", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled call was never answered")
	}
	waitFor(t, func() bool {
		return strings.Contains(routertest.Text(routertest.Call(t, cs, "fx_read_cancelled", map[string]any{})), "cancelled: 1")
	})
}

// waitFor polls cond for up to 30 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
	}
}

// A session stays open while its client keeps calling, though every call
// is answered without the SDK, and closes once idle for the TTL.
func TestHTTPSessionIdleForTheTTLCloses(t *testing.T) {
	const ttl = 2 * time.Second
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"fx": routertest.Fixture(t)}})
	h := routertest.NewWithConfig(t, dir, cfg, nil)
	h.Server.StartChildren(nil)
	h.Booted()
	ts := httptest.NewServer(httpsession.New(h.Server, httpsession.Options{TTL: ttl, Identify: func(*http.Request) ingress.SessionOptions { return ingress.SessionOptions{} }}))
	t.Cleanup(ts.Close)
	c := mcp.NewClient(&mcp.Implementation{Name: "idle", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, sessionEra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx_echo","arguments":{"message":"k"}}}`
	for end := time.Now().Add(2 * ttl); time.Now().Before(end); time.Sleep(ttl / 10) {
		if code, _, got := post(t, ts.URL, cs.ID(), call, nil); code != http.StatusOK || !strings.Contains(got, "Echo: k") {
			t.Fatalf("a busy session was closed: %d %s", code, got)
		}
	}
	time.Sleep(2 * ttl)
	if code, _, got := post(t, ts.URL, cs.ID(), call, nil); code != http.StatusNotFound {
		t.Errorf("a session idle for twice its TTL answered %d %s", code, got)
	}
}

// A 2026-07-28 error carries its HTTP status on the fast path as the
// SDK's handler sends it (SEP-2575): a child's missing-capability error
// (-32021) and invalid params are 400, a method not found 404, and any
// other error 200.
func TestSessionlessErrorsCarryTheirStatus(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t, "-payloads")}, nil)
	h.Server.StartChildren(nil)
	h.Booted()
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)
	for code, status := range map[int]int{-32021: http.StatusBadRequest, -32602: http.StatusBadRequest, -32601: http.StatusNotFound, -32000: http.StatusOK} {
		body, hdr := statelessCall(1, "fx_rpcerror", fmt.Sprintf(`{"code":%d,"message":"from the child"}`, code))
		got, ctype, text := post(t, ts.URL, "", body, hdr)
		if got != status || ctype != "application/json" || !strings.Contains(text, fmt.Sprintf(`"code":%d`, code)) {
			t.Errorf("a child's error %d: HTTP %d %s %s, want %d", code, got, ctype, text, status)
		}
	}
}

// A 2025-11-25 client whose connection drops during a proxied call
// resumes the stream with Last-Event-ID and reads the call's result: the
// call runs on, it is not cancelled with the dropped connection.
func TestADroppedConnectionResumesToTheCallsResult(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	h.Server.StartChildren(nil)
	h.Booted()
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)
	c := mcp.NewClient(&mcp.Implementation{Name: "drop", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, sessionEra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })

	ctx, drop := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"fx_slow","arguments":{"ms":600}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// Read the priming event's id, then drop the connection.
	var primed string
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			primed = id
		}
	}
	drop()
	resp.Body.Close()
	if primed == "" {
		t.Fatalf("no priming event: %q", buf[:n])
	}

	// The answer is stored once the call ends; a resume then replays it.
	want := `"text":"slept 600ms"`
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		get, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
		get.Header.Set("Accept", "text/event-stream")
		get.Header.Set("Mcp-Session-Id", cs.ID())
		get.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		get.Header.Set("Last-Event-ID", primed)
		resumed, err := http.DefaultClient.Do(get)
		if err != nil {
			t.Fatal(err)
		}
		replayed, _ := io.ReadAll(resumed.Body)
		resumed.Body.Close()
		if strings.Contains(string(replayed), `"id":"d"`) {
			if !strings.Contains(string(replayed), want) {
				t.Fatalf("resumed to %q, want the call's result", replayed)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer to resume to: %q", replayed)
		}
	}
}
