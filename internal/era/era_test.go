package era_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/era"
)

func TestSessionless(t *testing.T) {
	for v, want := range map[string]bool{
		"":                     false,
		"2024-11-05":           false,
		era.SessionVersion:     false,
		era.SessionlessVersion: true,
		"2027-01-01":           true, // a later version has no sessions either
	} {
		if got := era.Sessionless(v); got != want {
			t.Errorf("Sessionless(%q) = %v, want %v", v, got, want)
		}
	}
}

// session connects a go-sdk client asking for version to a server and
// returns the server's end of the connection.
func session(t *testing.T, version string) *mcp.ServerSession {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if ip := ss.InitializeParams(); ip == nil || ip.ProtocolVersion != version {
		t.Fatalf("the session negotiated %+v, want %s", ip, version)
	}
	return ss
}

// A request's era is the version its _meta names, else its session's.
func TestSessionlessRequest(t *testing.T) {
	old, fresh := session(t, era.SessionVersion), session(t, era.SessionlessVersion)
	named := func(v string) *mcp.ListToolsParams {
		return &mcp.ListToolsParams{Meta: mcp.Meta{mcp.MetaKeyProtocolVersion: v}}
	}
	for _, tc := range []struct {
		name string
		req  mcp.Request
		want bool
	}{
		{"the session era's session", &mcp.ServerRequest[*mcp.ListToolsParams]{Session: old, Params: &mcp.ListToolsParams{}}, false},
		{"the sessionless era's session", &mcp.ServerRequest[*mcp.ListToolsParams]{Session: fresh, Params: &mcp.ListToolsParams{}}, true},
		{"_meta names the sessionless era", &mcp.ServerRequest[*mcp.ListToolsParams]{Session: old, Params: named(era.SessionlessVersion)}, true},
		{"_meta names the session era", &mcp.ServerRequest[*mcp.ListToolsParams]{Session: fresh, Params: named(era.SessionVersion)}, false},
		{"an empty version in _meta", &mcp.ServerRequest[*mcp.ListToolsParams]{Session: fresh, Params: named("")}, true},
		{"params a typed nil", &mcp.ServerRequest[*mcp.InitializedParams]{Session: fresh}, true},
		{"no session, no _meta", &mcp.ServerRequest[*mcp.ListToolsParams]{Params: &mcp.ListToolsParams{}}, false},
	} {
		if got := era.SessionlessRequest(tc.req); got != tc.want {
			t.Errorf("%s: SessionlessRequest = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// written is v as the SDK writes an answer: HTML left unescaped.
func written(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// A result of the sessionless era says resultType first: complete, or
// input_required when it asks the client for input; one that already
// says it is sent as it is. A property of a tool's schema named
// resultType is no resultType of the result, and framing escapes nothing
// (a listing would cost more tokens).
func TestComplete(t *testing.T) {
	if era.Complete(nil) != nil {
		t.Error("Complete(nil) is not nil")
	}
	var asked mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"input_required","inputRequests":{}}`), &asked); err != nil {
		t.Fatal(err)
	}
	list := &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "a<b>", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"resultType": map[string]any{"type": "string"}}}}}}
	const listed = `{"resultType":"complete","ttlMs":0,"cacheScope":"","tools":[{"inputSchema":{"properties":{"resultType":{"type":"string"}},"type":"object"},"name":"a<b>"}]}`
	for _, tc := range []struct {
		name   string
		res    mcp.Result
		want   string
		prefix bool // want is how the answer begins
	}{
		{"a listing", list, listed, false},
		{"completed twice", era.Complete(list), listed, false},
		{"a call's result", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, `{"resultType":"complete","content":[{"type":"text","text":"hi"}]}`, false},
		{"a call asking for input", &mcp.CallToolResult{Content: []mcp.Content{}, InputRequests: mcp.InputRequestMap{}, RequestState: "s"},
			`{"resultType":"input_required","content":[],"requestState":"s","inputRequests":{}}`, false},
		{"a prompt asking for input", &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{}}, `{"resultType":"input_required",`, true},
		{"a read asking for input", &mcp.ReadResourceResult{InputRequests: mcp.InputRequestMap{}}, `{"resultType":"input_required",`, true},
		{"a result that says it already", &asked, `{"content":[],"resultType":"input_required","inputRequests":{}}`, false},
	} {
		got := written(t, era.Complete(tc.res))
		if got != tc.want && !(tc.prefix && strings.HasPrefix(got, tc.want)) {
			t.Errorf("%s: %s\nwant %s", tc.name, got, tc.want)
		}
		if n := strings.Count(got, `"resultType":"`); n != 1 {
			t.Errorf("%s: %d resultTypes in %s", tc.name, n, got)
		}
	}
}

// A child's bytes get resultType complete first unless they say one at
// their top level; nothing else in them changes.
func TestCompleteBytes(t *testing.T) {
	for in, want := range map[string]string{
		`{"content":[]}`:                         `{"resultType":"complete","content":[]}`,
		`{}`:                                     `{"resultType":"complete"}`,
		"{ \n }":                                 `{"resultType":"complete"}`,
		"{\n  \"isError\": true}":                `{"resultType":"complete","isError": true}`,
		` {"a":"<b>"}`:                           `{"resultType":"complete","a":"<b>"}`,
		`{"structuredContent":{"resultType":1}}`: `{"resultType":"complete","structuredContent":{"resultType":1}}`,
		`{"content":[],"resultType":"input_required"}`: `{"content":[],"resultType":"input_required"}`,
		`{"resultType":"complete"}`:                    `{"resultType":"complete"}`,
		`[]`:                                           `[]`,
		``:                                             ``,
	} {
		if got := string(era.CompleteBytes([]byte(in))); got != want {
			t.Errorf("CompleteBytes(%q) = %s, want %s", in, got, want)
		}
	}
}

// ResultBytes encodes a result as the SDK would: content never null, and
// resultType for a sessionless request only.
func TestResultBytes(t *testing.T) {
	for _, tc := range []struct {
		res         *mcp.CallToolResult
		sessionless bool
		want        string
	}{
		{nil, false, `{"content":[]}`},
		{nil, true, `{"resultType":"complete","content":[]}`},
		{&mcp.CallToolResult{IsError: true}, true, `{"resultType":"complete","content":[],"isError":true}`},
		{&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, false, `{"content":[{"type":"text","text":"ok"}]}`},
		{&mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}}, true, `{"resultType":"input_required","content":[],"inputRequests":{}}`},
	} {
		got, err := era.ResultBytes(tc.res, tc.sessionless)
		if err != nil || string(got) != tc.want {
			t.Errorf("ResultBytes(%+v, %v) = %s, %v; want %s", tc.res, tc.sessionless, got, err, tc.want)
		}
	}
}
