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

// capServer serves h on a real loopback server behind Listener(caps).
func capServer(t *testing.T, caps httpguard.Caps, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpguard.NewServer(h, httpguard.Timeouts{})
	go func() { _ = srv.Serve(httpguard.Listener(ln, caps)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// dialFrom connects to addr from the loopback address from (127.0.0.1,
// or another, which the server sees as another client).
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// ask sends one request on c and returns the response's status line.
func ask(c net.Conn, path string) string {
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err.Error()
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res.Status + " " + res.Header.Get("Retry-After")
}

// blocking answers /slow once release is closed (after telling started),
// anything else at once.
func blocking(started chan<- struct{}, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			started <- struct{}{}
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	})
}

// One local process holding more connections than a client's idle cap,
// idle or busy, locks no one out: every local process shares its
// address, and /health and the MCP endpoint still answer a new
// connection from it (the per-address cap turned them all away with 503).
func TestOneClientsConnectionsLockNoOneOut(t *testing.T) {
	const held = 300 // past DefaultCaps.IdlePerClient
	for _, busy := range []bool{false, true} {
		started, release := make(chan struct{}, held), make(chan struct{})
		addr := capServer(t, httpguard.Caps{}, blocking(started, release))
		for range held {
			c := dialFrom(t, "127.0.0.1", addr)
			if busy {
				fmt.Fprintf(c, "GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
				<-started
			} else if got := ask(c, "/x"); got != "200 OK " {
				t.Fatalf("while opening the idle connections: %q", got)
			}
		}
		for _, path := range []string{"/health", "/mcp"} {
			if got := ask(dialFrom(t, "127.0.0.1", addr), path); got != "200 OK " {
				t.Errorf("busy=%v: %s from the same address past %d held connections: %q", busy, path, held, got)
			}
		}
		close(release)
	}
}

// Idle connections give way: at an address's idle cap its oldest idle
// connection (here: connected, no request yet) is closed for the new one,
// which is served; another address's connections are not touched.
func TestIdleConnectionsGiveWay(t *testing.T) {
	addr := capServer(t, httpguard.Caps{IdlePerClient: 2}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	other := dialFrom(t, "127.0.0.2", addr)
	var held []net.Conn
	for range 3 {
		held = append(held, dialFrom(t, "127.0.0.1", addr))
	}
	_ = held[0].SetReadDeadline(time.Now().Add(30 * time.Second))
	if n, err := held[0].Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the oldest idle connection was not closed: read %d, %v", n, err)
	}
	for i, c := range append(held[1:], other) {
		if got := ask(c, "/x"); got != "200 OK " {
			t.Errorf("kept connection %d: %q", i, got)
		}
	}
}

// When every connection is busy, a new one is still answered: /health
// (by any spelling of its path) is served, anything else gets 503 with
// Retry-After; past the few such connections kept at once, a connection
// is answered 503 before any request. Once the work ends, a new
// connection is served again.
func TestABusyServerStillAnswersHealth(t *testing.T) {
	started, release := make(chan struct{}, 2), make(chan struct{})
	addr := capServer(t, httpguard.Caps{Total: 2, Overflow: 1}, blocking(started, release))
	for range 2 {
		fmt.Fprintf(dialFrom(t, "127.0.0.1", addr), "GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		<-started
	}
	// Each answer closes its connection; waiting for the close frees the
	// one place for the next.
	once := func(path string) string {
		c := dialFrom(t, "127.0.0.2", addr)
		got := ask(c, path)
		_, _ = io.Copy(io.Discard, c)
		return got
	}
	if got := once("/mcp"); got != "503 Service Unavailable 1" {
		t.Errorf("another request while every connection is busy: %q", got)
	}
	for _, p := range []string{"/health", "//health", "/%68ealth"} {
		if got := once(p); got != "200 OK " {
			t.Errorf("%s while every connection is busy: %q", p, got)
		}
	}
	// One such connection at once: a second, while the first is open and
	// silent, is refused outright (its /health too).
	silent := dialFrom(t, "127.0.0.1", addr)
	if got := once("/health"); got != "503 Service Unavailable 1" {
		t.Errorf("past the overflow connections: %q", got)
	}
	close(release)
	_ = silent.Close()
	waitFor(t, func() bool { return ask(dialFrom(t, "127.0.0.1", addr), "/mcp") == "200 OK " })
}

// waitFor polls cond until it holds (bounded by the test's own
// deadline, not a timed assertion).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		time.Sleep(10 * time.Millisecond)
	}
}
