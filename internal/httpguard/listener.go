package httpguard

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// The connection cap.
//
// What a cap must not do is let one client shut everyone else out. Every
// local process reaches a loopback server from the same address, and
// every client behind a reverse proxy from the proxy's, so a cap on the
// connections of one address is, for them, a cap on all of them: one
// process holding its 256 connections turned every other client away,
// /health included. So the cap counts what a connection costs while it
// does nothing, and gives way to work:
//
//   - Idle connections (no request yet, or kept alive between requests)
//     are capped per address: at the cap, that address's oldest idle
//     connection is closed to make room. A client holding many idle
//     connections loses its own, never anyone's place.
//   - All connections are capped in total (the process's descriptors are
//     finite): at the cap, the oldest idle connection of any address is
//     closed to make room.
//   - Only when every connection is busy (a request in flight, or a
//     WebSocket) does a new one come over the cap. It is still served one
//     request, for GET or HEAD /health only, so a balancer or an operator
//     sees the real status; any other request is answered 503 with
//     Retry-After. A few such connections are kept at once; past them a
//     connection is answered 503 and closed before any request.
//
// One client can then keep others out only by keeping the whole server
// busy, which no cap per address could prevent either.

// Caps bound a Listener's connections; zero fields take DefaultCaps'.
type Caps struct {
	// IdlePerClient is how many idle connections one remote address may
	// hold; its oldest idle one is closed for a new one past it.
	IdlePerClient int
	// Total is how many connections may be open at once; the oldest idle
	// one is closed for a new one past it.
	Total int
	// Overflow is how many connections that came when every connection
	// was busy may be open at once, each asking /health only.
	Overflow int
}

// DefaultCaps are the caps of every surface.
var DefaultCaps = Caps{IdlePerClient: 256, Total: 4096, Overflow: 64}

// Listener caps the connections ln accepts (see Caps). The server must be
// one NewServer made, which tells the connections when they are idle.
func Listener(ln net.Listener, c Caps) net.Listener {
	d := DefaultCaps
	if c.IdlePerClient > 0 {
		d.IdlePerClient = c.IdlePerClient
	}
	if c.Total > 0 {
		d.Total = c.Total
	}
	if c.Overflow > 0 {
		d.Overflow = c.Overflow
	}
	return &capListener{Listener: ln, caps: d, conns: map[*countedConn]struct{}{}}
}

type capListener struct {
	net.Listener
	caps Caps

	mu       sync.Mutex
	conns    map[*countedConn]struct{} // open, not overflowing
	overflow int
}

// refusal is written to a connection past every cap before it is closed.
const refusal = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: 31\r\n\r\n" +
	`{"error":"The server is busy"}` + "\n"

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host, _, err := net.SplitHostPort(c.RemoteAddr().String())
		if err != nil {
			host = c.RemoteAddr().String()
		}
		cc := &countedConn{Conn: c, l: l, host: host, since: time.Now(), idle: true}
		evict, admitted := l.admit(cc)
		for _, e := range evict {
			_ = e.Conn.Close()
		}
		if admitted {
			return cc, nil
		}
		// Answered off the accept loop: a client that does not read must
		// not hold up the others.
		go func() {
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = io.WriteString(c, refusal)
			_ = c.Close()
		}()
	}
}

// admit counts cc in and picks the idle connections to close for it;
// admitted is false when cc is past every cap.
func (l *capListener) admit(cc *countedConn) (evict []*countedConn, admitted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	idle, total := 0, len(l.conns)
	var ownOldest, anyOldest *countedConn
	for o := range l.conns {
		if !o.idle {
			continue
		}
		if anyOldest == nil || o.since.Before(anyOldest.since) {
			anyOldest = o
		}
		if o.host == cc.host {
			idle++
			if ownOldest == nil || o.since.Before(ownOldest.since) {
				ownOldest = o
			}
		}
	}
	drop := func(o *countedConn) {
		delete(l.conns, o)
		o.dropped = true
		evict = append(evict, o)
		total--
	}
	if idle >= l.caps.IdlePerClient && ownOldest != nil {
		drop(ownOldest)
		if anyOldest == ownOldest {
			anyOldest = nil
		}
	}
	if total >= l.caps.Total && anyOldest != nil {
		drop(anyOldest)
	}
	if total < l.caps.Total {
		l.conns[cc] = struct{}{}
		return evict, true
	}
	if l.overflow < l.caps.Overflow {
		l.overflow++
		cc.overflow = true
		return evict, true
	}
	return evict, false
}

// countedConn is a connection a capListener counts until it is closed.
type countedConn struct {
	net.Conn
	l        *capListener
	host     string
	overflow bool // came when every connection was busy: /health only

	// Under l.mu:
	since   time.Time // when it last became idle
	idle    bool
	dropped bool // closed to make room, or already released
}

// setState follows the server's view of the connection.
func (c *countedConn) setState(s http.ConnState) {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	idle := s == http.StateNew || s == http.StateIdle
	if idle && !c.idle {
		c.since = time.Now()
	}
	c.idle = idle
}

func (c *countedConn) Close() error {
	c.l.mu.Lock()
	if !c.dropped {
		c.dropped = true
		if c.overflow {
			c.l.overflow--
		} else {
			delete(c.l.conns, c)
		}
	}
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// connState is NewServer's http.Server.ConnState.
func connState(c net.Conn, s http.ConnState) {
	if cc, ok := c.(*countedConn); ok {
		cc.setState(s)
	}
}

type overflowKey struct{}

// connContext is NewServer's http.Server.ConnContext: it marks the
// requests of a connection that came over the cap.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*countedConn); ok && cc.overflow {
		return context.WithValue(ctx, overflowKey{}, true)
	}
	return ctx
}

func overflowing(r *http.Request) bool { return r.Context().Value(overflowKey{}) != nil }

// healthOnly lets a request of a connection that came over the cap
// through only when it asks GET or HEAD /health (by its path decoded and
// cleaned, as every route matches); any other is answered 503. Either
// way the connection closes after it.
func healthOnly(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("Connection", "close")
	r = Canonical(r)
	if r.URL.Path == "/health" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Retry-After", "1")
	WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "The server is busy"})
	return false
}
