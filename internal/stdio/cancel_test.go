package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/ingress"
)

// call is a taken call that answers its arguments, or, when block is
// set, waits to be cancelled.
type call struct {
	args    json.RawMessage
	block   bool
	started chan struct{}
}

func (c *call) Run(ctx context.Context) (*mcp.CallToolResult, []byte, error) {
	if !c.block {
		return nil, c.args, nil
	}
	close(c.started)
	<-ctx.Done()
	return nil, nil, ctx.Err()
}

// The byte path runs what take takes and answers it under the client's id; a
// notifications/cancelled naming a call it runs cancels that call ("a"
// and "\u0061" are one id); a request reusing the id of a call still
// running is refused without an id, as the SDK refuses one, whether the
// byte path would take it or not; the id is free again once its call
// answered.
func TestBytePathCancelsByIDAndRefusesAReusedID(t *testing.T) {
	started := make(chan struct{})
	inW, outR := serveWithBytePath(t, func(m ingress.Message) (ingress.Call, bool) {
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(m.Params, &p) != nil || p.Name == "declined" {
			return nil, false
		}
		return &call{args: p.Arguments, block: p.Name == "block", started: started}, true
	})
	lines := bufio.NewReader(outR)
	send := func(frame string) {
		t.Helper()
		go func() { _, _ = io.WriteString(inW, frame+"\n") }()
	}
	read := func() string {
		t.Helper()
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(line, "\n")
	}

	send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`)
	if got := read(); got != `{"jsonrpc":"2.0","id":"a","result":{"x":1}}` {
		t.Errorf("a taken call answered %s", got)
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block"}}`)
	<-started
	refused := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: request ID 7 already in use"}}`
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"x":2}}}`)
	if got := read(); got != refused {
		t.Errorf("a request reusing a running call's id answered %s", got)
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"declined"}}`)
	if got := read(); got != refused {
		t.Errorf("a declined request reusing a running call's id answered %s", got)
	}
	send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"declined","arguments":{"x":3}}}`)
	if got := read(); strings.Contains(got, `"result":{"x":3}`) || !strings.Contains(got, `"id":8`) {
		t.Errorf("a declined call: %s", got)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	if got := read(); got != `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"context canceled"}}` {
		t.Errorf("the cancelled call answered %s", got)
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"x":4}}}`)
	if got := read(); got != `{"jsonrpc":"2.0","id":7,"result":{"x":4}}` {
		t.Errorf("the id of an answered call, reused: %s", got)
	}

	started = make(chan struct{})
	send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"block"}}`)
	<-started
	send(`{"jsonrpc":"2.0","id":"\u0061","method":"tools/call","params":{"name":"echo","arguments":{"x":5}}}`)
	if got := read(); got != `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: request ID \"a\" already in use"}}` {
		t.Errorf(`"\u0061" while "a" runs answered %s`, got)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\u0061"}}`)
	if got := read(); got != `{"jsonrpc":"2.0","id":"a","error":{"code":-32603,"message":"context canceled"}}` {
		t.Errorf(`"a" cancelled as "\u0061" answered %s`, got)
	}
}

// A notifications/cancelled sent as a request, with an id, is not the
// byte path's: it cancels nothing and the SDK answers it with an error
// under its id, as it does when no taken call matches.
func TestBytePathLeavesACancellationWithAnIDToTheSDK(t *testing.T) {
	started := make(chan struct{})
	inW, outR := serveWithBytePath(t, func(ingress.Message) (ingress.Call, bool) {
		return &call{block: true, started: started}, true
	})
	lines := bufio.NewReader(outR)
	send := func(frame string) {
		t.Helper()
		go func() { _, _ = io.WriteString(inW, frame+"\n") }()
	}
	read := func() string {
		t.Helper()
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(line, "\n")
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block"}}`)
	<-started
	send(`{"jsonrpc":"2.0","id":9,"method":"notifications/cancelled","params":{"requestId":7}}`)
	if got := read(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":9,"error":`) {
		t.Errorf("a cancellation with an id answered %s", got)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	if got := read(); got != `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"context canceled"}}` {
		t.Errorf("the cancelled call answered %s", got)
	}
}
