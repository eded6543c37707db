package handoff_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/handoff"
	"github.com/evokore/evokore/internal/server"
)

func initialize(id, version string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"client","version":"1"}}}`
}

// TestTheAnswerIsTheSDKsByteForByte: for every protocol version the
// go-sdk supports, one it does not, and ids of both kinds, the front's
// answer is the bytes the router's own greeting (the SDK) gives. It goes
// red when answers_gen.go is stale against the SDK or evokore.cue.
func TestTheAnswerIsTheSDKsByteForByte(t *testing.T) {
	versions := append(mcp.SupportedProtocolVersions(), "1999-01-01", "2099-12-31", "")
	ids := []string{"0", "1", "-7", "999999999999999", `"init"`, `"a b:c/d=e~f"`, `""`}
	greet := server.Greeting("v1.2.3-rc.1+meta")
	n := 0
	for _, v := range versions {
		for _, id := range ids {
			frame := initialize(id, v)
			msg, err := jsonrpc.DecodeMessage([]byte(frame))
			if err != nil {
				t.Fatal(err)
			}
			want := greet(msg.(*jsonrpc.Request))
			got := handoff.Answer([]byte(frame), "v1.2.3-rc.1+meta")
			if want == nil || string(got) != string(want) {
				t.Errorf("%s:\n got %s\nwant %s", frame, got, want)
			}
			n++
		}
	}
	if n < 30 {
		t.Fatalf("only %d cases", n)
	}
}

// TestOnlyRequestsItCanAnswerExactlyAreAnswered: anything the SDK might
// read differently, or answer with an error, is left to the router.
func TestOnlyRequestsItCanAnswerExactlyAreAnswered(t *testing.T) {
	const v = "2025-06-18"
	good := initialize("1", v)
	if handoff.Answer([]byte(good), "dev") == nil {
		t.Fatal("a plain initialize was not answered")
	}
	withMeta := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"k":1},"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"c"}}}`
	if handoff.Answer([]byte(withMeta), "dev") == nil {
		t.Error("params with _meta were not answered")
	}
	for name, frame := range map[string]string{
		"not json":         `initialize`,
		"batch":            "[" + good + "]",
		"trailing bytes":   good + ` {}`,
		"another method":   strings.Replace(good, `"initialize"`, `"ping"`, 1),
		"method key case":  strings.Replace(good, `"method"`, `"Method"`, 1),
		"duplicate method": strings.Replace(good, `"method":"initialize"`, `"method":"ping","method":"initialize"`, 1),
		// A member named twice as the last one of its object, where no
		// count or missing member gives it away.
		"params twice, last":  strings.TrimSuffix(good, `}`) + `,"params":{}}`,
		"escaped id twice":    strings.TrimSuffix(good, `}`) + `,"\u0069d":2}`,
		"capability twice":    strings.Replace(good, `{"roots":{"listChanged":true}}`, `{"roots":{"listChanged":true},"roots":1}`, 1),
		"client name twice":   strings.Replace(good, `"version":"1"}`, `"version":"1","name":2}`, 1),
		"version twice, last": strings.Replace(good, `"version":"1"}}`, `"version":"1"},"protocolVersion":"x"}`, 1),
		"jsonrpc 1.0":         strings.Replace(good, `"2.0"`, `"1.0"`, 1),
		"extra member":        strings.Replace(good, `"id":1`, `"id":1,"x":2`, 1),
		"notification":        strings.Replace(good, `"id":1,`, ``, 1),
		"null id":             strings.Replace(good, `"id":1`, `"id":null`, 1),
		"16-digit id":         strings.Replace(good, `"id":1`, `"id":1234567890123456`, 1),
		"fraction id":         strings.Replace(good, `"id":1`, `"id":1.0`, 1),
		"exponent id":         strings.Replace(good, `"id":1`, `"id":1e3`, 1),
		"leading zero id":     strings.Replace(good, `"id":1`, `"id":01`, 1),
		"negative zero id":    strings.Replace(good, `"id":1`, `"id":-0`, 1),
		"escaped string id":   strings.Replace(good, `"id":1`, `"id":"a\"b"`, 1),
		"html string id":      strings.Replace(good, `"id":1`, `"id":"<a>"`, 1),
		"unicode string id":   strings.Replace(good, `"id":1`, `"id":"é"`, 1),
		"no params":           `{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		"params not object":   `{"jsonrpc":"2.0","id":1,"method":"initialize","params":[]}`,
		"version not string":  strings.Replace(good, `"`+v+`"`, `20250618`, 1),
		"capability not obj":  strings.Replace(good, `{"roots":{"listChanged":true}}`, `{"roots":true}`, 1),
		"capabilities absent": strings.Replace(good, `"capabilities":{"roots":{"listChanged":true}},`, ``, 1),
		"client name absent":  strings.Replace(good, `"name":"client",`, ``, 1),
		"client name number":  strings.Replace(good, `"name":"client"`, `"name":7`, 1),
		"meta not object":     strings.Replace(withMeta, `{"k":1}`, `[]`, 1),
		"unknown param":       strings.Replace(good, `"clientInfo"`, `"surprise":1,"clientInfo"`, 1),
	} {
		if handoff.Answer([]byte(frame), "dev") != nil {
			t.Errorf("%s: answered %s", name, frame)
		}
	}
	for _, version := range []string{`a"b`, "v1 2", "v1\n", "é"} {
		if handoff.Answer([]byte(good), version) != nil {
			t.Errorf("answered with version %q", version)
		}
	}
}

// TestTakeReturnsTheHandOffAndRemovesIt: the router gets what the front
// encoded, and no child can inherit it afterwards.
func TestTakeReturnsTheHandOffAndRemovesIt(t *testing.T) {
	prelude := []byte(initialize("1", "2025-06-18") + "\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n\x00\xff")
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	for _, c := range []struct {
		answer []byte
	}{{answer}, {nil}} {
		t.Setenv(handoff.Env, handoff.Encode(prelude, c.answer))
		p, a, handed, err := handoff.Take()
		if err != nil || !handed || string(p) != string(prelude) || string(a) != string(c.answer) || (c.answer == nil) != (a == nil) {
			t.Errorf("Take = %q, %q, %v, %v", p, a, handed, err)
		}
		if _, set := os.LookupEnv(handoff.Env); set {
			t.Error("the variable is still set")
		}
	}
	os.Unsetenv(handoff.Env)
	if _, _, handed, err := handoff.Take(); handed || err != nil {
		t.Errorf("no variable: handed %v, err %v", handed, err)
	}
	for _, bad := range []string{"", "garbage", "2.AA.AA", "1.!!.AA", "1.AA", "1." + strings.Repeat("A", 100000) + "."} {
		t.Setenv(handoff.Env, bad)
		if _, _, handed, err := handoff.Take(); handed || err == nil {
			t.Errorf("%.20q: handed %v, err %v", bad, handed, err)
		}
		if _, set := os.LookupEnv(handoff.Env); set {
			t.Errorf("%.20q is still set", bad)
		}
	}
}

// The generated answers are JSON-RPC responses once filled in.
func TestAnAnswerIsOneResponse(t *testing.T) {
	got := handoff.Answer([]byte(initialize(`"x"`, "2025-11-25")), "dev")
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil || m["id"] != "x" || m["result"] == nil || strings.ContainsRune(string(got), '\n') {
		t.Fatalf("%s: %v", got, err)
	}
}
