// Command httpbridge is the floor an HTTP MCP proxy is measured against:
// a streamable HTTP endpoint in front of one stdio child, doing only what
// any such proxy must. It starts the command named by its arguments,
// initializes it once, and then answers POSTs on /mcp: a request's id is
// replaced by one of the bridge's own (sessions share the child, so their
// ids would collide), the line goes to the child, and the child's answer
// goes back with the client's id as a plain JSON response. initialize is
// answered from the child's first answer; notifications are passed on
// (notifications/initialized is not: the child had its own); what the
// child sends unasked is dropped. Session ids are handed out, never
// checked. It ends when its stdin does.
//
//	httpbridge [-addr 127.0.0.1:0] COMMAND [ARG...]
//
// It prints "httpbridge listening on ADDR" on stderr once it listens. The
// HTTP benchmark (BenchmarkHTTPTable, make bench-report) runs it beside
// evokore serve --http, so evokore's cost is read against this.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
)

// message is the envelope of one JSON-RPC message, the parts a relay reads.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// bridge owns the child's stdio and the calls waiting for an answer.
type bridge struct {
	mu      sync.Mutex
	in      io.Writer
	waiting map[int64]chan message
	next    int64
	session atomic.Int64
	// initResult is the child's answer to the bridge's own initialize.
	initResult json.RawMessage
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: httpbridge [-addr ADDR] COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fail(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fail(err)
	}
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	// The bridge's own stdin ending ends the child's, then the bridge:
	// whoever started it closes that pipe to stop both.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = in.Close()
		_ = cmd.Wait()
		os.Exit(0)
	}()
	br := &bridge{in: in, waiting: map[int64]chan message{}}
	go br.read(out)
	hello, err := br.call("initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"httpbridge","version":"1"}}`))
	if err != nil || hello.Error != nil {
		fail(fmt.Errorf("initializing the child: %v %s", err, hello.Error))
	}
	br.initResult = hello.Result
	if err := br.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		fail(err)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "httpbridge listening on %s\n", l.Addr())
	fail(http.Serve(l, br))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "httpbridge:", err)
	os.Exit(1)
}

// read takes the child's lines and hands each answer to its caller.
func (b *bridge) read(out io.Reader) {
	sc := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := sc.ReadBytes('\n')
		if err != nil {
			fail(fmt.Errorf("the child's stdout: %w", err))
		}
		var m message
		if json.Unmarshal(line, &m) != nil || m.Method != "" {
			continue
		}
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			continue
		}
		b.mu.Lock()
		ch := b.waiting[id]
		delete(b.waiting, id)
		b.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

func (b *bridge) write(line []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := b.in.Write(line)
	return err
}

// call sends a request under a fresh id and waits for its answer.
func (b *bridge) call(method string, params json.RawMessage) (message, error) {
	ch := make(chan message, 1)
	b.mu.Lock()
	b.next++
	id := b.next
	b.waiting[id] = ch
	b.mu.Unlock()
	line := make([]byte, 0, 64+len(method)+len(params))
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = strconv.AppendInt(line, id, 10)
	line = append(line, `,"method":`...)
	line = strconv.AppendQuote(line, method)
	if len(params) > 0 {
		line = append(line, `,"params":`...)
		line = append(line, params...)
	}
	line = append(line, "}\n"...)
	if err := b.write(line); err != nil {
		return message{}, err
	}
	return <-ch, nil
}

func (b *bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		// No stream to resume and nothing to end: DELETE and GET are
		// declined as the protocol allows.
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	var m message
	if err == nil {
		err = json.Unmarshal(body, &m)
	}
	if err != nil || m.Method == "" {
		http.Error(w, "one JSON-RPC request or notification", http.StatusBadRequest)
		return
	}
	if len(m.ID) == 0 {
		if m.Method != "notifications/initialized" {
			// Trailing newline: the child reads lines.
			_ = b.write(append(bytes.TrimSpace(body), '\n'))
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var answer message
	if m.Method == "initialize" {
		answer.Result = b.initResult
		w.Header().Set("Mcp-Session-Id", strconv.FormatInt(b.session.Add(1), 10))
	} else if answer, err = b.call(m.Method, m.Params); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	resp := make([]byte, 0, 64+len(answer.Result)+len(answer.Error))
	resp = append(resp, `{"jsonrpc":"2.0","id":`...)
	resp = append(resp, m.ID...)
	if answer.Error != nil {
		resp = append(resp, `,"error":`...)
		resp = append(resp, answer.Error...)
	} else {
		resp = append(resp, `,"result":`...)
		resp = append(resp, answer.Result...)
	}
	resp = append(resp, '}')
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(resp)
}
