package sessionrecord

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/router"
)

// decodedText is how ResultText read a result's bytes before it read
// them in place: the reference rawText is held to.
func decodedText(b []byte) string {
	var raw struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(b, &raw) != nil {
		return ""
	}
	var parts []string
	for _, c := range raw.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// resultCases are results as children send them, and every shape the
// decoding treats its own way.
var resultCases = []struct {
	result  string
	inPlace bool
}{
	{`{"content":[{"type":"text","text":"hello"}]}`, true},
	{`{"content":[{"type":"text","text":"a\nb \u00e9 \ud83c\udf89"},{"type":"image","data":"xx","mimeType":"image/png"},{"text":"t2","type":"text"}],"isError":false,"structuredContent":{"a":[1,2]}}`, true},
	{`{"content":[],"_meta":{"x":1}}`, true},
	{`{"isError":true,"content":[{"type":"text","text":null},{"type":null,"text":"x"},{"type":"text"}]}`, true},
	{` { "content" : [ { "type" : "text" , "text" : "spaced" } ] } `, true},
	{`{"content":[{"type":"text","text":"lone \ud800 half"}]}`, true},
	{`{"content":[{"type":"text","text":"bad ` + "\xff" + ` byte"}]}`, false},
	{`{"Content":[{"type":"text","text":"folded name"}]}`, false},
	{`{"content":[{"type":"text","text":"one"}],"content":[{"type":"text","text":"two"}]}`, false},
	{`{"content":[{"type":"text","TEXT":"folded"}]}`, false},
	{`{"content":[{"type":"text","text":"a","text":"b"}]}`, false},
	{`{"content":[{"type":"text","text":5}]}`, false},
	{`{"content":[{"type":"image","text":5}]}`, false},
	{`{"content":[{"type":7,"text":"x"}]}`, false},
	{`{"content":[null,{"type":"text","text":"after null"}]}`, false},
	{`{"content":["str"]}`, false},
	{`{"content":null}`, false},
	{`{"content":{"type":"text"}}`, false},
	{`{"other":1}`, false},
	{`null`, false},
	{`[1]`, false},
}

// ResultText reads a result's bytes in place into exactly the text the
// decoding gave, and leaves every other shape to the decoding.
func TestResultTextInPlaceIsDecoded(t *testing.T) {
	for _, tc := range resultCases {
		b := []byte(tc.result)
		if _, ok := rawText(b); ok != tc.inPlace {
			t.Errorf("%s: read in place %v, want %v", b, ok, tc.inPlace)
		}
		checkResultText(t, b)
	}
}

func FuzzResultText(f *testing.F) {
	for _, tc := range resultCases {
		f.Add([]byte(tc.result))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if json.Valid(b) { // as the proxy checked the child's frame
			checkResultText(t, b)
		}
	})
}

func checkResultText(t *testing.T, b []byte) {
	t.Helper()
	stand := &mcp.CallToolResult{}
	c := &router.Call{Raw: &router.RawResult{Bytes: b, Result: stand}}
	if got, want := ResultText(router.Outcome{Call: c, Result: stand}), decodedText(b); got != want {
		t.Errorf("%q: ResultText %q, decoding %q", b, got, want)
	}
}

// The records ask for a result's text once each (the audit log's
// detail, the replay's output): it is read once.
func TestResultTextIsReadOnce(t *testing.T) {
	stand := &mcp.CallToolResult{}
	c := &router.Call{Raw: &router.RawResult{Bytes: []byte(`{"content":[{"type":"text","text":"hello"}]}`), Result: stand}}
	o := router.Outcome{Call: c, Result: stand}
	if ResultText(o) != "hello" {
		t.Fatal(ResultText(o))
	}
	if n := testing.AllocsPerRun(10, func() { ResultText(o) }); n != 0 {
		t.Errorf("asking again allocates %v times: the text is read again", n)
	}
}
