package ingress_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/ingress"
)

// Decode takes what the go-sdk takes and refuses the rest with the
// JSON-RPC error to answer, the id echoed only when it is itself sound.
func TestDecode(t *testing.T) {
	cases := []struct {
		frame string
		code  int64
		id    string // the answer's id as JSON
		says  string // part of the error message
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, "", ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, "", ""},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, 0, "", ""},
		{`{"jsonrpc":"2.0","id":-9007199254740991,"error":{"code":1,"message":"x"}}`, 0, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, ingress.CodeParseError, "null", ""},
		{`{"jsonrpc":"2.0","id":"\u00e9","method":"x","params":{"s":"` + "\xc3" + `"}}`, ingress.CodeParseError, `"\u00e9"`, ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, ingress.CodeInvalidRequest, "null", ""},
		{` 7 `, ingress.CodeInvalidRequest, "null", ""},
		{`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, ingress.CodeInvalidRequest, "null", ""},
		{`{"jsonrpc":"2.0","id":1e2,"method":"ping"}`, ingress.CodeInvalidRequest, "null", ""},
		{`{"jsonrpc":"2.0","id":"s","method":"ping","params":1}`, ingress.CodeInvalidRequest, `"s"`, ""},
		{`{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}`, ingress.CodeInvalidRequest, "3", ""},
		{`{"jsonrpc":"2.0","method":"m","method":"m"}`, ingress.CodeInvalidRequest, "null", ""},
		{`{"jsonrpc":"2.0","id":4,"method":"m","params":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`, 0, "", ""},
		{`{"jsonrpc":"2.0","id":4,"method":"m","params":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`, ingress.CodeInvalidRequest, "4", "nesting depth 1001"},
	}
	for _, c := range cases {
		msg, rej := ingress.Decode([]byte(c.frame))
		if c.code == 0 {
			if rej != nil || msg == nil {
				t.Errorf("%.60s: rejected: %+v", c.frame, rej)
			}
			continue
		}
		if rej == nil {
			t.Errorf("%.60s: accepted as %T", c.frame, msg)
			continue
		}
		var ans struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rej.Answer(), &ans); err != nil || ans.JSONRPC != "2.0" || ans.Error.Code != c.code || string(ans.ID) != c.id ||
			!strings.Contains(ans.Error.Message, c.says) {
			t.Errorf("%.60s: answer %s, want code %d id %s", c.frame, rej.Answer(), c.code, c.id)
		}
	}
}

// Scan returns a tools/call only as a request and a cancellation only as
// a notification; the other shapes are the SDK path's to refuse.
func TestScanTakesOnlyARequestCallAndANotificationCancel(t *testing.T) {
	for msg, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`:                              true,
		`{"jsonrpc":"2.0","method":"tools/call","params":{}}`:                                     false,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`:           true,
		`{"jsonrpc":"2.0","id":9,"method":"notifications/cancelled","params":{"requestId":1}}`:    false,
		`{"jsonrpc":"2.0","id":null,"method":"notifications/cancelled","params":{"requestId":1}}`: false,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`:                              false,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{}}`:                       false,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}`:                              false,
	} {
		if _, ok := ingress.Scan([]byte(msg)); ok != want {
			t.Errorf("Scan(%s) = %v, want %v", msg, ok, want)
		}
	}
}

func BenchmarkDecodeToolsCall(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"nav_read_anchor","arguments":{"path":"/src/service.go","anchor_id":"handlers","lines_before":20,"lines_after":10},"_meta":{"progressToken":"p-1"}}}`)
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if _, rej := ingress.Decode(frame); rej != nil {
			b.Fatal(rej.Reason)
		}
	}
}

// What a carried call's _meta may hold: the trace context always; a
// progress token only where the transport delivers progress; the
// per-request protocol members only for a sessionless request.
func TestViaDeliversOnlyWhatItsTransportCarries(t *testing.T) {
	stdio, session, sessionless := ingress.Via{Progress: true}, ingress.Via{}, ingress.Via{Sessionless: true}
	for _, c := range []struct {
		key  string
		want [3]bool // stdio, an HTTP session, a sessionless request
	}{
		{"traceparent", [3]bool{true, true, true}},
		{"tracestate", [3]bool{true, true, true}},
		{"progressToken", [3]bool{true, false, false}},
		{"io.modelcontextprotocol/protocolVersion", [3]bool{false, false, true}},
		{"io.modelcontextprotocol/clientCapabilities", [3]bool{false, false, true}},
		{"io.modelcontextprotocol/clientInfo", [3]bool{false, false, true}},
		{"io.modelcontextprotocol/related-task", [3]bool{false, false, false}},
	} {
		got := [3]bool{stdio.Delivers(c.key), session.Delivers(c.key), sessionless.Delivers(c.key)}
		if got != c.want {
			t.Errorf("%s: delivered %v, want %v", c.key, got, c.want)
		}
	}
}
