package httpguard

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Timeouts.
//
// http.Server's ReadTimeout and WriteTimeout are whole-request deadlines:
// a ReadTimeout also cancels the request's context when it passes (the
// server's background read of the connection fails), and a WriteTimeout
// cuts the response. Both would end an SSE stream or a tool call that
// legitimately runs for minutes. So the server (NewServer) keeps only a
// header timeout and an idle timeout, and the guard sets per-request
// deadlines through http.ResponseController instead:
//
//   - Body: a request's body must arrive within Body of the handler
//     starting; once it is read to its end the read deadline is lifted,
//     so a long call is not cancelled. A request without a body gets
//     none beyond the header timeout.
//   - Write: every write (and flush) of the response must complete within
//     Write of starting it; the deadline moves forward with each write,
//     so a stream that keeps sending lives as long as it likes while a
//     client that stops reading is cut off. A hijacked connection (the
//     approvals feed's WebSocket) is its owner's to bound.

// Deadlines bound one request's I/O; zero fields take DefaultDeadlines'.
type Deadlines struct {
	Body  time.Duration
	Write time.Duration
}

// DefaultDeadlines are the deadlines of every surface.
var DefaultDeadlines = Deadlines{Body: 30 * time.Second, Write: 30 * time.Second}

func (d Deadlines) orDefault() Deadlines {
	if d.Body <= 0 {
		d.Body = DefaultDeadlines.Body
	}
	if d.Write <= 0 {
		d.Write = DefaultDeadlines.Write
	}
	return d
}

// apply sets r's deadlines; done lifts them when the handler returns, so
// a kept-alive connection's next request starts clean.
func (d Deadlines) apply(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, func()) {
	rc := http.NewResponseController(w)
	if r.Body != nil && r.Body != http.NoBody {
		_ = rc.SetReadDeadline(time.Now().Add(d.Body))
		r = r.WithContext(r.Context())
		r.Body = &bodyDeadline{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
	}
	pw := &progressWriter{ResponseWriter: w, rc: rc, d: d.Write}
	return pw, r, func() {
		// The server writes what is buffered after the handler returns:
		// give it one more Write's time, then nothing carries over.
		_ = rc.SetWriteDeadline(time.Now().Add(d.Write))
	}
}

// bodyDeadline lifts the read deadline once the body has been read to
// its end.
type bodyDeadline struct {
	io.ReadCloser
	once sync.Once
	lift func()
}

func (b *bodyDeadline) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.lift)
	}
	return n, err
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

// Hijack hands the connection over with no deadline left on it: its new
// owner bounds its own reads and writes.
func (p *progressWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := p.rc.Hijack()
	if err == nil {
		_ = c.SetDeadline(time.Time{})
	}
	return c, brw, err
}

// Unwrap lets http.ResponseController reach the server's writer.
func (p *progressWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// NewServer is the http.Server of every surface: headers within 10 s,
// idle connections closed after 2 minutes, headers up to 64 KiB; the
// rest is bounded per request by the guard.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
}

// DefaultPerClient is how many connections one client address may hold
// open at once on a surface.
const DefaultPerClient = 256

// Listener caps the connections open at once from one remote address:
// one more is answered 503 and closed. perClient <= 0 means
// DefaultPerClient. The cap counts every connection until it is closed,
// hijacked ones included.
func Listener(ln net.Listener, perClient int) net.Listener {
	if perClient <= 0 {
		perClient = DefaultPerClient
	}
	return &capListener{Listener: ln, max: perClient, open: map[string]int{}}
}

type capListener struct {
	net.Listener
	max  int
	mu   sync.Mutex
	open map[string]int
}

// refusal is written to a connection over the cap before it is closed.
const refusal = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: 49\r\n\r\n" +
	`{"error":"Too many connections from this client"}`

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
		l.mu.Lock()
		over := l.open[host] >= l.max
		if !over {
			l.open[host]++
		}
		l.mu.Unlock()
		if !over {
			return &countedConn{Conn: c, release: func() { l.release(host) }}, nil
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

func (l *capListener) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[host]--; l.open[host] <= 0 {
		delete(l.open, host)
	}
}

type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
