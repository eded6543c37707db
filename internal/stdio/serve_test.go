package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/stdio"
)

// answerWatch passes what is written through to w and closes second
// once a line answering id 2 went through.
type answerWatch struct {
	w      io.Writer
	mu     sync.Mutex
	second chan struct{}
}

func (a *answerWatch) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	a.mu.Lock()
	defer a.mu.Unlock()
	if strings.Contains(string(p), `"id":2`) && a.second != nil {
		close(a.second)
		a.second = nil
	}
	return n, err
}

// slowConnect is a router whose sessions return from Connect only once
// the client's second request was answered, or a second passed: the
// window between the first read and the end of Connect held wide open. The rest of ingress.Router and ingress.View is not called by Serve.
type slowConnect struct {
	ingress.Router
	answered <-chan struct{}
	take     func(ingress.Message) (ingress.Call, bool)
}

type slowView struct {
	ingress.View
	rt *slowConnect
}

func (r *slowConnect) Open(ingress.SessionOptions) ingress.View { return slowView{rt: r} }

func (r *slowConnect) Take(_ ingress.View, m ingress.Message, _ ingress.Via) (ingress.Call, bool) {
	return r.take(m)
}

func (v slowView) Connect(ctx context.Context, t mcp.Transport, _ *mcp.ServerSessionState) (*mcp.ServerSession, error) {
	server := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	ss, err := server.Connect(ctx, t, nil)
	// The call the client sent meanwhile is answered here only when the
	// SDK path took it; the byte path waits for Connect to return.
	select {
	case <-v.rt.answered:
	case <-time.After(time.Second):
	}
	return ss, err
}

// A client answered at once (the greeting) writes its first call before
// the session's Connect has returned; that call is offered to the byte
// path all the same, not handed to the SDK path, which would answer a
// call the router alone serves (a task) as a plain one.
func TestServeOffersTheBytePathACallReadWhileTheSessionConnects(t *testing.T) {
	frames := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast","arguments":{"first":true}}}`,
	}, "\n") + "\n"
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	fast := &echoFast{}
	answered := make(chan struct{})
	rt := &slowConnect{answered: answered, take: fast.take}
	go func() { _, _ = io.WriteString(inW, frames) }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- stdio.Serve(ctx, stdio.NewTransport(inR, &answerWatch{w: outW, second: answered}, nil), rt)
	}()

	lines := bufio.NewReader(outR)
	for range 2 {
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("answer %q: %v", line, err)
		}
		if string(m.ID) == "2" && string(m.Result) != `{"first":true}` {
			t.Errorf("the first call was not carried by the byte path: %s", line)
		}
	}
	_ = inW.Close()
	cancel()
	<-served
}
