package httpguard_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/httpguard"
)

// serve runs h on a real server with short read and write timeouts.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	ts.Config = httpguard.NewServer(h, httpguard.Timeouts{Read: 300 * time.Millisecond, Write: 300 * time.Millisecond})
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.Listener.Addr().String()
}

// A client that sends its body slower than the read timeout is cut off;
// the handler never sees the whole body.
func TestSlowBodyIsCutOff(t *testing.T) {
	whole := make(chan bool, 1)
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		whole <- err == nil
	}))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{")
	// Never more: the server must give up on the body and close. (The
	// bound is only there so a broken guard fails instead of hanging.)
	select {
	case ok := <-whole:
		if ok {
			t.Fatal("the handler read a body that never came")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the handler still waits for the body")
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("the connection was not closed: %v", err)
	}
}

// A call that runs past both timeouts after its body was read is not
// cancelled, and a stream that keeps writing outlives the write timeout
// many times over.
func TestLongCallsAndStreamsLive(t *testing.T) {
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		for i := range 12 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			fmt.Fprintf(w, "data: %d\n\n", i)
			http.NewResponseController(w).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
			fmt.Fprint(w, "data: done\n\n")
		}
	}))
	res, err := http.Post("http://"+addr+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var events []string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			events = append(events, line)
		}
	}
	if len(events) != 13 || events[12] != "data: done" {
		t.Errorf("the stream ended early: %d events, %v (%v)", len(events), events, sc.Err())
	}
}

// One client address holds at most the cap of connections at once; one
// more is answered 503, and a closed one frees its place.
func TestConnectionCapPerClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpguard.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}), httpguard.Timeouts{})
	go func() { _ = srv.Serve(httpguard.Listener(ln, 2)) }()
	t.Cleanup(func() { _ = srv.Close() })
	get := func(c net.Conn) string {
		fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		line, _ := bufio.NewReader(c).ReadString('\n')
		return strings.TrimSpace(line)
	}
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if got := get(c); got != "HTTP/1.1 200 OK" {
			t.Fatalf("within the cap: %q", got)
		}
		held = append(held, c)
	}
	over, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	if got := get(over); got != "HTTP/1.1 503 Service Unavailable" {
		t.Errorf("over the cap: %q", got)
	}
	_ = held[0].Close()
	// The server notices the close on its next read: try until the place
	// is free (bounded by the test's own deadline, not a timed assertion).
	for {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		got := get(c)
		_ = c.Close()
		if got == "HTTP/1.1 200 OK" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
}
