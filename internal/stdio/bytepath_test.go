package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/stdio"
)

// echoFast takes tools/call for the tool "fast" and answers each with
// its raw arguments as the result, unchanged.
type echoFast struct {
	mu    sync.Mutex
	taken []string
}

// answered is a call whose result is bytes given.
type answered []byte

func (a answered) Run(context.Context) (*mcp.CallToolResult, []byte, error) { return nil, a, nil }

func (f *echoFast) take(m ingress.Message) (ingress.Call, bool) {
	f.mu.Lock()
	f.taken = append(f.taken, m.Method)
	f.mu.Unlock()
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.Name != "fast" {
		return nil, false
	}
	return answered(p.Arguments), true
}

// serveWithBytePath connects an SDK server over a Transport carrying
// what take takes and returns the ends a client writes to and reads
// from.
func serveWithBytePath(t *testing.T, take stdio.Take) (io.Writer, io.Reader) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr := stdio.NewTransport(inR, outW, nil)
	tr.Carry(take)
	server := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	ss, err := server.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	return inW, outR
}

func TestBytePathTakesOnlyCleanToolCallsAndAnswersUnderTheirID(t *testing.T) {
	fast := &echoFast{}
	inW, outR := serveWithBytePath(t, fast.take)
	lines := bufio.NewReader(outR)
	exchange := func(frame string) string {
		t.Helper()
		go func() { _, _ = io.WriteString(inW, frame+"\n") }()
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	// The result is the bytes given, under the client's id, string or number.
	if got := exchange(`{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"fast","arguments":{"b": [1, 2 ,3]}}}`); got != `{"jsonrpc":"2.0","id":"s1","result":{"b": [1, 2 ,3]}}`+"\n" {
		t.Errorf("string id answered %q", got)
	}
	if got := exchange(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"fast","arguments":{}}}`); got != `{"jsonrpc":"2.0","id":42,"result":{}}`+"\n" {
		t.Errorf("number id answered %q", got)
	}
	// What the byte path declines, and frames that are not clean, go to
	// the SDK, which answers them as it always did.
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"mark":1}}}`,
		`{"jsonrpc":"2.0","id":3,"id":4,"method":"tools/call","params":{"name":"fast","arguments":{"mark":1}}}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"fast","arguments":{"mark":1}}}`,
		`{"jsonrpc":"1.0","id":5,"method":"tools/call","params":{"name":"fast","arguments":{"mark":1}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"notifications/cancelled","params":{"requestId":42}}`,
	} {
		var m map[string]json.RawMessage
		line := exchange(frame)
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("answer %q: %v", line, err)
		}
		if string(m["result"]) == `{"mark":1}` {
			t.Errorf("%s was taken by the byte path: %s", frame, line)
		}
	}
	fast.mu.Lock()
	defer fast.mu.Unlock()
	want := []string{"tools/call", "tools/call", "tools/call"} // s1, 42, and "slow" declined
	if len(fast.taken) != len(want) {
		t.Errorf("offered %v, want %v", fast.taken, want)
	}
}
