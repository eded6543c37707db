package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// Which dropped lines read as a response, and under which id.
func TestResponseIDOfADroppedLine(t *testing.T) {
	for _, c := range []struct{ head, tail, want string }{
		{`{"jsonrpc":"2.0","id":"evokore-fp-7","result":{"text":"bad \x"}}`, "", `"evokore-fp-7"`},
		{`{"jsonrpc":"2.0","result":{"text":"bad \x","id":"evokore-fp-1"},"id":12}`, "", `12`},
		{` { "id" : -3 , "error": {"message": "\q"} }`, "", `-3`},
		// A request or a notification: its id is the child's own.
		{`{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{"x":"\x"}}`, "", ``},
		{`{"jsonrpc":"2.0","id":4,"params":{"x":"\x"},"method":"roots/list"}`, "", ``},
		{`{"jsonrpc":"2.0","id":4,"params":{"x":"\x" oops "method":"roots/list"}`, "", ``},
		{`{"jsonrpc":"2.0","id":4 "x":"\x","method":"roots/list"}`, "", ``},
		// Ids no request of ours has.
		{`{"jsonrpc":"2.0","id":"abc","result":{"t":"\x"}}`, "", ``},
		{`{"jsonrpc":"2.0","id":1.5,"result":{"t":"\x"}}`, "", ``},
		{`{"jsonrpc":"2.0","id":null,"result":{"t":"\x"}}`, "", ``},
		{`{"jsonrpc":"2.0","id":,"result":{}`, "", ``},
		{`not json at all "id":3`, "", ``},
		{``, "", ``},
		// A line cut at the limit: the id before the cut, or last.
		{`{"jsonrpc":"2.0","id":"evokore-fp-2","result":{"content":[{"text":"yyyy`, `yyyy"}]}}`, `"evokore-fp-2"`},
		{`{"jsonrpc":"2.0","result":{"content":[{"text":"yyyy`, `yyyy"}]},"id":9}`, `9`},
		{`{"jsonrpc":"2.0","params":{"content":[{"text":"yyyy`, `yyyy"}]},"method":"x","id":9}`, ``},
		{`{"jsonrpc":"2.0","id":9,"params":{"content":[{"text":"yyyy`, `yyyy"}]},"method":"x"}`, ``},
		{`{"jsonrpc":"2.0","result":{"content":[{"text":"yyyy`, `yyyy \"id\":9}"}]}}`, ``},
		// Cut inside the result: a nested "method" does not make it a
		// request.
		{`{"jsonrpc":"2.0","id":5,"result":{"calls":[{"method":"GET","n":"yyyy`, `yyyy"}]}}`, `5`},
		{`{"jsonrpc":"2.0","result":{"calls":[{"method":"GET","n":"yyyy`, `yyyy","method":"PUT"}]},"id":6}`, `6`},
	} {
		var tail []byte
		if c.tail != "" {
			tail = []byte(c.tail)
		}
		if got := string(responseID([]byte(c.head), tail)); got != c.want {
			t.Errorf("responseID(%s | %s) = %s, want %s", c.head, c.tail, got, c.want)
		}
	}
}

// Invalid UTF-8 is repaired byte by byte, as encoding/json decodes it.
func TestRepairUTF8IsWhatDecodingReads(t *testing.T) {
	for _, s := range []string{"\xff\xfe", "a\xe2\x82b", "\xed\xa0\x80", "ok é \xc3", "\xf4\x90\x80\x80"} {
		line := []byte(`{"t":"` + s + `"}`)
		var want, got struct{ T string }
		fixed := repairUTF8(line)
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(fixed, &got); err != nil || got.T != want.T || !json.Valid(fixed) {
			t.Errorf("%q: repaired %q, decoding reads %q", s, got.T, want.T)
		}
	}
}

// The filter passes a repaired line on, and replaces a dropped answer by
// an error under its id.
func TestJSONLinesPassesRepairedAndAnswersDropped(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"result":{"t":"a` + "\xff" + `b"}}`,
		`banner`,
		`{"jsonrpc":"2.0","id":2,"result":{"t":"\x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"t":"\x"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
	}, "\n") + "\n"
	var log bytes.Buffer
	j := newJSONLines(io.NopCloser(strings.NewReader(in)), &log, "[s] ")
	out, err := io.ReadAll(j)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{"t":"a` + "\uFFFD" + `b"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":` + string(mustJSON(t, MsgAnswerNotJSON("s"))) + `}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"result":{}}` + "\n"
	if string(out) != want {
		t.Errorf("out:\n%s\nwant:\n%s", out, want)
	}
	if n := strings.Count(log.String(), "skipped a line"); n != 3 {
		t.Errorf("%d lines logged as skipped, want 3:\n%s", n, log.String())
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
