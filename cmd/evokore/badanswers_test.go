package main_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/evokore/evokore/internal/proxy"
)

// A child's answers that cannot go on as they are, on the fast path
// (evokore over stdio; the child gets "evokore-fp-N" ids): invalid UTF-8
// reaches the client repaired, as decoders repair it, and valid JSON; an
// answer that is not JSON or is over the limit settles its call at once
// with an error saying so, instead of the request timeout's "timed out";
// isError given twice is read as the client reads it, the last, and the
// failed call goes into cooldown.
func TestFastPathBadChildAnswers(t *testing.T) {
	r := startFastRouterWith(t, fastRouterOptions{childArgs: []string{"-hostile"}, readyTool: "c_dupiserror", buffered: true,
		child: map[string]any{"cooldownMs": 60000}, env: []string{"EVOKORE_PROXY_REQUEST_TIMEOUT_MS=30000"}})
	// prompt only bounds the wait for the answer to badutf8, which the
	// child gives at once.
	const prompt = 10 * time.Second
	// A dropped answer that waited for the request timeout would end
	// with the timeout's message, not the one rpcError checks.
	timed := func(id, tool, args string) map[string]json.RawMessage {
		t.Helper()
		return r.call(t, id, tool, args)
	}
	rpcError := func(m map[string]json.RawMessage) string {
		var e struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(m["error"], &e); err != nil || e.Code != -32603 {
			t.Errorf("want a -32603 error, got %s", m)
		}
		return e.Message
	}

	// Invalid UTF-8: the line the client reads is UTF-8, the bad bytes
	// U+FFFD each.
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"c_badutf8","arguments":{}}}`)
	start := time.Now()
	var raw []byte
	for raw == nil {
		select {
		case line := <-r.lines:
			if !strings.Contains(string(line), `"method"`) {
				raw = line
			}
		case <-time.After(prompt):
			t.Fatalf("no answer to badutf8 within %v\nstderr:\n%s", prompt, r.stderr.String())
		}
	}
	t.Logf("badutf8 answered in %v", time.Since(start).Round(time.Millisecond))
	if !utf8.Valid(raw) || !strings.Contains(string(raw), `"text":"bad `+"\uFFFD\uFFFD"+` byte"`) {
		t.Errorf("badutf8 reached the client as %q", raw)
	}

	if msg := rpcError(timed(`2`, "c_notjson", `{}`)); msg != proxy.MsgAnswerNotJSON("c") {
		t.Errorf("notjson: %q", msg)
	}
	for i, args := range []string{`{"bytes":16777226}`, `{"bytes":16777226,"idLast":true}`} {
		if msg := rpcError(timed(`"big`+string(rune('0'+i))+`"`, "c_overlimit", args)); msg != proxy.MsgAnswerTooLong("c", 16<<20) {
			t.Errorf("overlimit %s: %q", args, msg)
		}
	}
	if res := resultOf(t, r.call(t, `3`, "c_echo", `{"message":"after"}`)); res.Content[0].Text != "Echo: after" {
		t.Errorf("after the bad answers: %+v", res)
	}

	if res := resultOf(t, timed(`4`, "c_dupiserror", `{}`)); !res.IsError {
		t.Errorf("dupiserror reads as isError false: %+v", res)
	}
	if res := resultOf(t, r.call(t, `5`, "c_dupiserror", `{}`)); !strings.Contains(res.Content[0].Text, "[EVOKORE COOLDOWN] Tool 'c_dupiserror' is currently on cooldown") {
		t.Errorf("the same call after its failure ran again: %+v", res)
	}
	log := r.stderr.String()
	for _, want := range []string{
		`[c] skipped a line on stdout that is not JSON-RPC: {"jsonrpc":"2.0","id":"evokore-fp-`,
		`(it answered request "evokore-fp-`,
		`[c] skipped a stdout line of more than 16777216 bytes (it answered request "evokore-fp-`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%.3000s", want, log)
		}
	}
}
