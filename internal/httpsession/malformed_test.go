package httpsession_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// malformed is a body stdio refuses, and what its answer must say.
type malformed struct {
	name string
	body string
	code int64
	id   string // the id echoed, as JSON
}

// stdioAnswer is what the stdio transport answers frame with.
func stdioAnswer(t *testing.T, frame string) string {
	t.Helper()
	_, rej := ingress.Decode([]byte(frame))
	if rej == nil {
		t.Fatalf("stdio takes %q", frame)
	}
	return string(rej.Answer())
}

// refusedAsOverStdio posts each case and checks that it is answered 400
// with exactly stdio's JSON-RPC error for the same frame.
func refusedAsOverStdio(t *testing.T, url, sid string, cases []malformed, header func(body string) map[string]string) {
	t.Helper()
	for _, c := range cases {
		want := stdioAnswer(t, c.body)
		if !strings.Contains(want, fmt.Sprintf(`"id":%s,"error":{"code":%d,`, c.id, c.code)) {
			t.Fatalf("%s: stdio answers %s, want code %d and id %s", c.name, want, c.code, c.id)
		}
		code, ctype, got := post(t, url, sid, c.body, header(c.body))
		if code != http.StatusBadRequest || ctype != "application/json" || strings.TrimSpace(got) != want {
			t.Errorf("%s: HTTP %d %s %s\nwant 400 application/json %s", c.name, code, ctype, got, want)
		}
	}
}

// A POST body the stdio transport refuses as a frame (an id that is not
// an integer or is out of the range the go-sdk carries exactly, invalid
// UTF-8, a member given twice) is refused over HTTP the same way, in
// both eras, with 400 and stdio's JSON-RPC error, and nothing runs: the
// SDK, which carries ids through a float64 and takes the last of a
// repeated member, never sees it (1.9 was answered as id 1, next to the
// call in flight under id 1, and the call ran).
func TestMalformedBodiesAreRefusedAsOverStdio(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, nil)
	h.Server.StartChildren(nil)
	h.Booted()
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)

	call := func(id, tool string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
	}
	sessionCases := []malformed{
		{"a fractional id", call("1.9", "fx_count"), ingress.CodeInvalidRequest, "null"},
		{"an id past int64", call("123456789012345678901234567890", "fx_count"), ingress.CodeInvalidRequest, "null"},
		{"an id past 2^53", call("9007199254740993", "fx_count"), ingress.CodeInvalidRequest, "null"},
		{"an exponent id", call("1e300", "fx_count"), ingress.CodeInvalidRequest, "null"},
		{"invalid UTF-8", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fx_count","arguments":{},"_meta":{"note":"` + "\xff" + `"}}}`, ingress.CodeParseError, "5"},
		{"a repeated id", `{"jsonrpc":"2.0","id":6,"id":7,"method":"tools/call","params":{"name":"fx_count","arguments":{}}}`, ingress.CodeInvalidRequest, "null"},
		{"a repeated method", `{"jsonrpc":"2.0","id":8,"method":"tools/list","method":"tools/call","params":{"name":"fx_count","arguments":{}}}`, ingress.CodeInvalidRequest, "8"},
		{"not JSON", `{"jsonrpc":"2.0","id":9,`, ingress.CodeParseError, "null"},
	}

	// A 2025-11-25 session, with a call in flight under id 1.
	c := mcp.NewClient(&mcp.Implementation{Name: "malformed", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, sessionEra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	slow := make(chan string, 1)
	go func() {
		_, _, got := post(t, ts.URL, cs.ID(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx_slow","arguments":{"ms":400}}}`, nil)
		slow <- got
	}()
	time.Sleep(100 * time.Millisecond)
	noHeaders := func(string) map[string]string { return nil }
	refusedAsOverStdio(t, ts.URL, cs.ID(), append([]malformed{
		{"id 1.9 next to id 1 in flight", call("1.9", "fx_echo"), ingress.CodeInvalidRequest, "null"},
	}, sessionCases...), noHeaders)
	if got := <-slow; strings.Count(got, `"id":1,`) != 1 || !strings.Contains(got, `"result"`) {
		t.Errorf("the call in flight under id 1: %s", got)
	}
	// Nothing ran: the child counted no call; a sound one it counts.
	if _, _, got := post(t, ts.URL, cs.ID(), call("10", "fx_read_count"), nil); !strings.Contains(got, "calls: 0") {
		t.Errorf("after the malformed session bodies, read_count: %s", got)
	}
	if _, _, got := post(t, ts.URL, cs.ID(), call("11", "fx_count"), nil); !strings.Contains(got, "calls: 1") {
		t.Errorf("a sound count: %s", got)
	}

	// A 2025-03-26 session, whose batches the SDK still takes: a batch
	// with one malformed element is refused whole, a sound one is served.
	old, err := mcp.NewClient(&mcp.Implementation{Name: "batches", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: ts.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-03-26"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = old.Close() })
	v0326 := map[string]string{"Mcp-Protocol-Version": "2025-03-26"}
	bad := call("1.5", "fx_count")
	code, ctype, got := post(t, ts.URL, old.ID(), "["+call(`"b1"`, "fx_count")+","+bad+"]", v0326)
	if want := stdioAnswer(t, bad); code != http.StatusBadRequest || ctype != "application/json" || strings.TrimSpace(got) != want {
		t.Errorf("a batch with a malformed element: HTTP %d %s %s, want 400 %s", code, ctype, got, want)
	}
	if code, _, got := post(t, ts.URL, old.ID(), "["+call(`"b2"`, "fx_count")+"]", v0326); code != http.StatusOK || !strings.Contains(got, "calls: 2") {
		t.Errorf("a sound batch: HTTP %d %s", code, got)
	}

	// The sessionless era (2026-07-28).
	sessionless := func(id, tool string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":{%q:"2026-07-28",%q:{}}}}`,
			id, tool, mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities)
	}
	headers := func(body string) map[string]string {
		tool := "fx_count"
		if strings.Contains(body, "fx_echo") {
			tool = "fx_echo"
		}
		return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
	}
	meta := fmt.Sprintf(`"_meta":{%q:"2026-07-28",%q:{}}`, mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities)
	refusedAsOverStdio(t, ts.URL, "", []malformed{
		{"a fractional id", sessionless("7.5", "fx_count"), ingress.CodeInvalidRequest, "null"},
		{"an exponent id", sessionless("1e300", "fx_count"), ingress.CodeInvalidRequest, "null"},
		{"an id past 2^53", sessionless("9007199254740993", "fx_echo"), ingress.CodeInvalidRequest, "null"},
		{"invalid UTF-8", `{"jsonrpc":"2.0","id":"u","method":"tools/call","params":{"name":"fx_count","arguments":{},"note":"` + "\xff" + `",` + meta + `}}`, ingress.CodeParseError, `"u"`},
		{"a repeated id", `{"jsonrpc":"2.0","id":3,"id":4,"method":"tools/call","params":{"name":"fx_count","arguments":{},` + meta + `}}`, ingress.CodeInvalidRequest, "null"},
	}, headers)
	// The fixture serves new-era callers from a process of their own.
	body, hdr := statelessCall(20, "fx_read_count", `{}`)
	if _, _, got := post(t, ts.URL, "", body, hdr); !strings.Contains(got, "calls: 0") {
		t.Errorf("after the malformed sessionless bodies, read_count: %s", got)
	}
	body, hdr = statelessCall(21, "fx_count", `{}`)
	if _, _, got := post(t, ts.URL, "", body, hdr); !strings.Contains(got, "calls: 1") {
		t.Errorf("a sound sessionless count: %s", got)
	}
}
