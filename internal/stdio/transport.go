package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/linewrite"
)

// Transport is an mcp.Transport over a byte stream pair, normally the
// router's stdin and stdout. Unlike the go-sdk's StdioTransport it never
// ends the session over a bad frame: the frame is answered with a
// JSON-RPC error, the reason is logged, and reading goes on.
type Transport struct {
	in  io.Reader
	out io.Writer
	log *slog.Logger
	// Drain bounds how long the end of input waits for the requests read
	// before it to be answered; zero waits 30 s.
	Drain time.Duration

	connected atomic.Bool
	openOnce  sync.Once
	conn      atomic.Pointer[Conn]
	bytePath  atomic.Pointer[bytePath]
}

// Answered waits until every request read so far has been answered, or
// ctx ends. A server shutting down calls it before it closes the session,
// whose closing would otherwise drop an answer still on its way out.
func (t *Transport) Answered(ctx context.Context) {
	if c := t.conn.Load(); c != nil {
		c.waitAnswers(ctx)
	}
}

// NewTransport serves MCP over in and out with newline-delimited JSON-RPC.
// log receives one warning per rejected frame; nil discards them. Connect
// it once.
func NewTransport(in io.Reader, out io.Writer, log *slog.Logger) *Transport {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Transport{in: in, out: out, log: log}
}

// Connect starts reading in, unless Open already did, and returns the
// connection. A second Connect fails: two readers of one stream would
// split its frames between them.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	if t.connected.Swap(true) {
		return nil, errors.New("stdio: the transport is already connected")
	}
	t.Open(nil)
	c := t.conn.Load()
	// Drain may be set between Open and Connect; only Read uses it.
	if t.Drain > 0 {
		c.drain = t.Drain
	}
	return c, nil
}

// Open starts reading in before a server is connected; frames wait for
// Connect. When greet is not nil and the first frame is an initialize
// request, greet is called with that request and what it returns, unless
// nil, is written at once as the answer: the client's handshake then does
// not wait for the server to be assembled. The connected server still
// reads the initialize request, so its session learns the client; its own
// answer to it is not written again (a warning is logged if it differs
// from greet's). Open does nothing the second time, nor after Connect.
func (t *Transport) Open(greet func(*jsonrpc.Request) []byte) {

	t.openOnce.Do(func() {
		c := &Conn{
			in:       t.in,
			out:      linewrite.New(t.out),
			rawOut:   t.out,
			log:      t.log,
			incoming: make(chan frameOrErr),
			closed:   make(chan struct{}),
			drain:    t.Drain,
			open:     map[any]bool{},
			bytePath: &t.bytePath,
			greet:    greet,
		}
		if c.drain <= 0 {
			c.drain = 30 * time.Second
		}
		t.conn.Store(c)
		fr := NewFrameReader(t.in, MaxFrame)
		// When the client's first frame is already waiting, Open returns
		// once it was answered: the caller goes on to build the server,
		// which holds both cores for milliseconds, and the greeting would
		// wait behind it. Otherwise it returns once the reader runs.
		waiting := greet != nil && inputWaiting(t.in)
		if greet != nil {
			c.greetDone = make(chan struct{})
		}
		greetDone := c.greetDone // readLoop clears the field
		reading := make(chan struct{})
		go func() {
			close(reading)
			c.readLoop(fr)
		}()
		<-reading
		if waiting {
			select {
			case <-greetDone:
			case <-time.After(greetWait):
			}
		}
	})
}

// Conn is one stdio connection; see Transport.
type Conn struct {
	in io.Reader
	// out writes whole lines, the answers of concurrent calls combined
	// into one write when they meet.
	out *linewrite.Writer
	// rawOut is the output as given, watched at the end of input for a
	// client that stopped reading.
	rawOut io.Writer
	log    *slog.Logger

	// incoming carries frames from readLoop, one at a time, so Read can
	// also wait on ctx and Close.
	incoming chan frameOrErr
	// seen counts frames for the log; only Read touches it.
	seen int

	closeOnce sync.Once
	closed    chan struct{}

	// open are the ids (as ingress.IDKey and jsonrpc.ID.Raw give them) of
	// requests read and not answered yet, whichever path runs them: a
	// request reusing one is refused, as the SDK refuses it. An id leaves
	// the set before its answer is written, as the SDK frees it, since
	// the client may reuse it once it reads the answer; writing counts
	// the writes still under way. answered is signalled whenever either
	// shrinks. A client that writes its requests and closes its end at
	// once (a script, a pipe) still gets every answer: the end of input
	// is reported only once they are written.
	openMu   sync.Mutex
	open     map[any]bool
	writing  int
	answered chan struct{}
	drain    time.Duration

	// greet answers the first frame early when it is an initialize
	// request (see Transport.Open); only the reading goroutine touches
	// it. greetDone is set with it and closed and cleared after the first
	// frame (Open waits on it). greeted is greet's early answer, until
	// the server's own answer to the same id is dropped.
	greet     func(*jsonrpc.Request) []byte
	greetDone chan struct{}
	greeted   atomic.Pointer[earlyAnswer]

	// fast is the transport's byte path (Carry), read per frame.
	bytePath *atomic.Pointer[bytePath]
}

// greetWait bounds how long Open waits for the first frame it saw
// waiting to be answered: a client that wrote half a line and stalled
// must not hold the server's start.
const greetWait = 100 * time.Millisecond

// earlyAnswer is an initialize answer written before the server read
// the request.
type earlyAnswer struct {
	id   any
	line []byte
}

type frameOrErr struct {
	frame []byte
	err   error
}

// readLoop owns the FrameReader while it runs. It stops at the first
// error other than an overlong frame, or when the connection closes, or
// when it hands the reader on to run a call the byte path took. A
// read blocked on a stdin that never closes outlives Close; there is no
// portable way to interrupt it, and it holds no more than one frame.
func (c *Conn) readLoop(fr *FrameReader) {
	for {
		frame, err := fr.Next()
		if c.greetDone != nil {
			if err == nil {
				c.greetEarly(c.greet, frame)
			}
			c.greet = nil
			close(c.greetDone)
			c.greetDone = nil
		}
		if err == nil {
			if run, ok := c.offerFast(frame); ok {
				if run != nil {
					readers.run(func() { c.readLoop(fr) })
					run()
					return
				}
				continue
			}
		}
		select {
		case c.incoming <- frameOrErr{frame, err}:
		case <-c.closed:
			return
		}
		var tooLarge *FrameTooLargeError
		if err != nil && !errors.As(err, &tooLarge) {
			return
		}
	}
}

// greetEarly answers frame with greet's answer if frame is an
// initialize request and greet has one.
func (c *Conn) greetEarly(greet func(*jsonrpc.Request) []byte, frame []byte) {
	msg, rej := ingress.Decode(frame)
	if rej != nil {
		return
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "initialize" || !req.ID.IsValid() {
		return
	}
	answer := greet(req)
	if answer == nil {
		return
	}
	// Stored before it is written: the server's answer may only be
	// dropped once this one is out, and the server reads the request
	// only after this returns.
	c.greeted.Store(&earlyAnswer{id: req.ID.Raw(), line: answer})
	if err := c.writeLine(answer); err != nil {
		c.log.Warn("[EVOKORE] Could not write the initialize answer", "err", err)
	}
}

// Read returns the next valid message. Bad frames are answered and logged
// here and never reach the caller; only the end of input (io.EOF), a read
// or write failure, Close or ctx end the reading.
func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var v frameOrErr
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case v = <-c.incoming:
		}
		c.seen++
		var tooLarge *FrameTooLargeError
		switch {
		case errors.As(v.err, &tooLarge):
			// Internal error rather than Invalid Request: the frame may
			// well have been valid; the router declines to hold it.
			if err := c.reject(tooLarge.Size, &ingress.Rejection{Code: ingress.CodeInternalError, Reason: tooLarge.Error()}); err != nil {
				return nil, err
			}
			continue
		case errors.Is(v.err, io.EOF):
			c.awaitAnswers()
			return nil, v.err
		case v.err != nil:
			return nil, v.err
		}
		msg, rej := ingress.Decode(v.frame)
		if rej != nil {
			if err := c.reject(int64(len(v.frame)), rej); err != nil {
				return nil, err
			}
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() && !c.opens(req.ID.Raw()) {
			id, _ := json.Marshal(req.ID.Raw())
			// The SDK's answer: without an id, not to be taken for the
			// answer of the request in flight.
			if err := c.reject(int64(len(v.frame)), &ingress.Rejection{Code: ingress.CodeInvalidRequest, Reason: "request ID " + string(id) + " already in use"}); err != nil {
				return nil, err
			}
			continue
		}
		return msg, nil
	}
}

// offerFast offers a frame to the byte path (Carry), on the reading goroutine,
// and reports whether it took it. It is still in reading order, as the
// reader holds at most one frame for the SDK at a time.
func (c *Conn) offerFast(frame []byte) (run func(), ok bool) {
	fp := c.bytePath.Load()
	if fp == nil {
		return nil, false
	}
	m, ok := ingress.Scan(frame)
	if !ok {
		return nil, false
	}
	// Marked open before it is offered: the answer may be written before
	// offer returns. A reused id goes on to Read, which refuses it.
	if m.ID != nil && !c.opens(ingress.IDKey(m.ID)) {
		return nil, false
	}
	if run, ok := fp.offer(m, c); ok {
		return run, true
	}
	if m.ID != nil {
		c.release(ingress.IDKey(m.ID))
	}
	return nil, false
}

// awaitAnswers waits until every request read has been answered, the
// drain bound passes, nobody reads the output any more (a client that
// exited must not keep the router for a hung call), or the connection
// closes.
func (c *Conn) awaitAnswers() {
	ctx, cancel := context.WithTimeout(context.Background(), c.drain)
	defer cancel()
	var left atomic.Bool
	go watchReader(ctx, c.rawOut, func() { left.Store(true); cancel() })
	if !c.waitAnswers(ctx) {
		c.openMu.Lock()
		n := max(len(c.open), c.writing)
		c.openMu.Unlock()
		c.log.Warn("[EVOKORE] Input ended with requests still unanswered", "open", n, "client_reads", !left.Load())
	}
}

// waitAnswers reports whether every request read was answered before ctx
// ended or the connection closed.
func (c *Conn) waitAnswers(ctx context.Context) bool {
	for {
		c.openMu.Lock()
		if len(c.open) == 0 && c.writing == 0 {
			c.openMu.Unlock()
			return true
		}
		if c.answered == nil {
			c.answered = make(chan struct{})
		}
		answered := c.answered
		c.openMu.Unlock()
		select {
		case <-answered:
		case <-ctx.Done():
			return false
		case <-c.closed:
			return false
		}
	}
}

// reject answers a bad frame and logs why.
func (c *Conn) reject(size int64, r *ingress.Rejection) error {
	c.log.Warn("[EVOKORE] Rejected a frame from the client",
		"frame", c.seen, "bytes", size, "code", r.Code, "reason", r.Reason)
	return c.writeLine(r.Answer())
}

// Write sends one message as one line.
//
// A cancelled ctx does not stop it: the SDK writes the answer of a call
// under that call's context, which closing the connection cancels, and
// an answer computed is an answer owed.
func (c *Conn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if c.answeredEarly(msg, data) {
		return nil
	}
	var key any
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID.IsValid() {
		key = resp.ID.Raw()
	}
	return c.respond(key, data)
}

// answeredEarly reports whether msg is the server's answer to the
// initialize request greet answered already; it is then dropped.
func (c *Conn) answeredEarly(msg jsonrpc.Message, data []byte) bool {
	e := c.greeted.Load()
	if e == nil {
		return false
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.ID.Raw() != e.id || !c.greeted.CompareAndSwap(e, nil) {
		return false
	}
	if !bytes.Equal(data, e.line) {
		c.log.Warn("[EVOKORE] The initialize answer sent early differs from the server's", "early", string(e.line), "server", string(data))
	}
	c.release(e.id)
	return true
}

// opens adds a request's id to the open set, or reports false when a
// request with that id is open already.
func (c *Conn) opens(key any) bool {
	c.openMu.Lock()
	defer c.openMu.Unlock()
	if c.open[key] {
		return false
	}
	c.open[key] = true
	return true
}

// release removes a request from the open set unanswered (the byte path
// declined it, or its answer was written early).
func (c *Conn) release(key any) {
	c.openMu.Lock()
	delete(c.open, key)
	c.wake()
	c.openMu.Unlock()
}

// respond writes a line, the answer to the request key when key is not
// nil: the id is free once the line is on its way, and the end of input
// waits for the write.
func (c *Conn) respond(key any, line []byte) error {
	c.openMu.Lock()
	if key != nil {
		delete(c.open, key)
	}
	c.writing++
	c.openMu.Unlock()
	err := c.writeLine(line)
	c.openMu.Lock()
	c.writing--
	c.wake()
	c.openMu.Unlock()
	return err
}

// wake wakes whoever waits for the open set to empty; openMu is held.
func (c *Conn) wake() {
	if c.answered != nil {
		close(c.answered)
		c.answered = nil
	}
}

// writeLine writes one line. It still writes after Close: the output is
// the process's stdout, and the SDK may send the answer of the last call
// after it began closing the connection.
func (c *Conn) writeLine(data []byte) error {
	_, err := c.out.Write(append(data, '\n'))
	return err
}

// Close stops reading. It does not close the input: closing a blocking
// stdin waits for the read in progress to return, which holds shutdown
// hostage to a client that keeps its end open. The blocked read ends with
// the process; it holds no more than one frame.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID is empty: a stdio connection is the only session of its
// process.
func (c *Conn) SessionID() string { return "" }
