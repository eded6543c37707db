package httpguard

import (
	"bufio"
	"net"
	"net/http"
	"time"
)

// Timeouts.
//
// http.Server's ReadTimeout bounds reading a request's headers and body
// only: once the body is read, net/http lifts the read deadline, so a
// long call is not cancelled by it. Its WriteTimeout, though, is one
// deadline for the whole response: it would cut an SSE stream or the
// answer of a tool call that legitimately runs for minutes. So the
// server's handler moves the write deadline forward before every write
// and flush instead: each write must complete within Write of starting,
// so a stream that keeps sending lives as long as it likes while a
// client that stops reading is cut off. A hijacked connection (the
// approvals feed's WebSocket) is handed over with no deadline: its owner
// bounds its own reads and writes.

// Timeouts bound a surface's connections; zero fields take
// DefaultTimeouts'.
type Timeouts struct {
	// Header bounds reading a request's headers, Read its headers and
	// body.
	Header, Read time.Duration
	// Write bounds each write of a response.
	Write time.Duration
	// Idle closes a kept-alive connection with no request.
	Idle time.Duration
}

// DefaultTimeouts are the timeouts of every surface.
var DefaultTimeouts = Timeouts{Header: 10 * time.Second, Read: 30 * time.Second, Write: 30 * time.Second, Idle: 2 * time.Minute}

// NewServer is the http.Server of every surface, with t's timeouts and
// headers up to 64 KiB.
func NewServer(h http.Handler, t Timeouts) *http.Server {
	d := DefaultTimeouts
	if t.Header > 0 {
		d.Header = t.Header
	}
	if t.Read > 0 {
		d.Read = t.Read
	}
	if t.Write > 0 {
		d.Write = t.Write
	}
	if t.Idle > 0 {
		d.Idle = t.Idle
	}
	return &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			// The server writes what is buffered after the handler
			// returns: give it one more write's time.
			defer func() { _ = rc.SetWriteDeadline(time.Now().Add(d.Write)) }()
			if overflowing(r) && !healthOnly(w, r) {
				return
			}
			h.ServeHTTP(&progressWriter{ResponseWriter: w, rc: rc, d: d.Write}, r)
		}),
		ReadHeaderTimeout: d.Header, ReadTimeout: d.Read, IdleTimeout: d.Idle,
		MaxHeaderBytes: 64 << 10,
		// A Listener's connections learn whether they are idle (they may
		// be closed to make room) and whether they came over the cap.
		ConnState:   connState,
		ConnContext: connContext,
	}
}

// progressWriter moves the write deadline forward before every write.
type progressWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (p *progressWriter) extend() { _ = p.rc.SetWriteDeadline(time.Now().Add(p.d)) }

func (p *progressWriter) Write(b []byte) (int, error) {
	p.extend()
	return p.ResponseWriter.Write(b)
}

func (p *progressWriter) WriteHeader(code int) {
	p.extend()
	p.ResponseWriter.WriteHeader(code)
}

// Flush implements http.Flusher.
func (p *progressWriter) Flush() { _ = p.FlushError() }

// FlushError is what http.ResponseController.Flush calls.
func (p *progressWriter) FlushError() error {
	p.extend()
	return p.rc.Flush()
}

// Hijack hands the connection over with no deadline left on it.
func (p *progressWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := p.rc.Hijack()
	if err == nil {
		_ = c.SetDeadline(time.Time{})
	}
	return c, brw, err
}

// Unwrap lets http.ResponseController reach the server's writer.
func (p *progressWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }
