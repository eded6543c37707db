package server_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/replay"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// The arguments the records keep are what decoding, redacting and
// encoding them wrote, byte for byte, whatever order and spacing the
// client sent them in: keys sorted, numbers as float64 writes them,
// HTML characters escaped; a secret key masked at any depth, and what it
// held hidden in the recorded answer; a configured secret inside a
// string scrubbed; huge arguments whole.
func TestRecordedArgumentsAreWhatDecodingWrote(t *testing.T) {
	const envSecret = "env-planted-2b7d41"
	fx := routertest.Fixture(t)
	fx["env"] = map[string]any{"API_TOKEN": "${PLANTED_ENV}"}
	h := routertest.New(t, map[string]any{"fx": fx}, map[string]string{"PLANTED_ENV": envSecret,
		"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	cs := h.Connect(nil)
	h.Booted()
	home := filepath.Join(h.Dir, "home")

	huge := strings.Repeat("line <é> \"q\"\n", 20_000)
	hugeArgs, _ := json.Marshal(map[string]any{"mark": "huge", "content": huge})
	cases := []struct{ mark, sent, args, summary string }{
		{"plain", `{"zeta":1, "mark":"plain","note":"hi <b> & é","alpha":{"y":true,"x":null},"n":1.50,"e":1e3}`,
			`{"alpha":{"x":null,"y":true},"e":1000,"mark":"plain","n":1.5,"note":"hi \u003cb\u003e \u0026 é","zeta":1}`,
			"alpha e=1000 mark=plain n=1.5 note=hi <b> & é zeta=1"},
		{"deep", `{"mark":"deep","cfg":{"list":[{"x":{"client_secret":"deep-planted-5e6f"}}]}}`,
			`{"cfg":{"list":[{"x":{"client_secret":"[REDACTED]"}}]},"mark":"deep"}`, "cfg mark=deep"},
		{"configured", `{"mark":"configured","query":"uses ` + envSecret + `"}`,
			`{"mark":"configured","query":"uses ${PLANTED_ENV}"}`, "uses ${PLANTED_ENV}"},
		{"huge", string(hugeArgs), string(hugeArgs), replay.Summarize(map[string]any{"mark": "huge", "content": huge})},
	}
	for _, c := range cases {
		if res := routertest.Call(t, cs, "fx_args", json.RawMessage(c.sent)); res.IsError {
			t.Fatalf("%s: %s", c.mark, routertest.Text(res))
		}
	}
	for _, c := range cases {
		// The audit line as written, not decoded: its bytes are the point.
		line := waitAuditLine(t, home, `"mark":"`+c.mark+`"`)
		if src := string(rawjson.Member([]byte(line), "source")); src != `"proxy"` {
			t.Errorf("%s: audit source %s, want \"proxy\"", c.mark, src)
		}
		if got := string(rawjson.Member([]byte(line), "args")); got != c.args {
			t.Errorf("%s: audit args\n%.300s\nwant\n%.300s", c.mark, got, c.args)
		}
	}
	// A call without arguments has no args member, as an empty map had
	// none.
	routertest.Call(t, cs, "fx_count", json.RawMessage(`{}`))
	if line := waitAuditLine(t, home, `"tool":"fx_count"`); strings.Contains(line, `"args"`) {
		t.Errorf("a call without arguments is recorded with them: %s", line)
	}
	var lines []map[string]any
	routertest.WaitFor(t, "the replay lines", func() bool {
		for _, ls := range replayFiles(t, home) {
			lines = ls
		}
		return len(lines) >= len(cases)+1
	})
	for i, c := range cases {
		l := lines[i]
		if l["summary"] != c.summary {
			t.Errorf("%s: replay summary %q, want %q", c.mark, l["summary"], c.summary)
		}
		out, _ := l["output"].(string)
		if strings.Contains(out, "deep-planted-5e6f") || strings.Contains(out, envSecret) {
			t.Errorf("%s: replay output holds a secret: %s", c.mark, out)
		}
	}
	if out := lines[1]["output"].(string); !strings.Contains(out, `"client_secret":"[REDACTED]"`) {
		t.Errorf("the echoed deep secret is not hidden in the answer: %s", out)
	}
}

// waitAuditLine waits for the audit line holding marker and returns it
// as written.
func waitAuditLine(t *testing.T, home, marker string) string {
	t.Helper()
	var hit string
	routertest.WaitFor(t, "audit line with "+marker, func() bool {
		for _, l := range strings.Split(readAll(t, filepath.Join(home, "audit", "audit.jsonl")), "\n") {
			if strings.Contains(l, marker) && strings.Contains(l, `"eventType":"tool_call"`) {
				hit = l
				return true
			}
		}
		return false
	})
	return hit
}
