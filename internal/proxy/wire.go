package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/evokore/evokore/internal/linewrite"
	"github.com/evokore/evokore/internal/rawjson"
)

// wireIDPrefix starts every id the wire gives a request to a child.
// The SDK's client numbers its requests with integers, so a string id
// with this prefix can only be ours.
const wireIDPrefix = "evokore-fp-"

// wire is the line carrier of one stdio child's connection, and the only
// way a tools/call reaches a stdio child: it writes each call as one
// line to the child's stdin through the same lock as the SDK's
// transport, and takes the responses to them off the child's stdout
// before the SDK reads it. See the package doc.
type wire struct {
	w    *lockedStdin
	next atomic.Uint64

	// pending holds where each request in flight is answered. Whoever
	// takes an id out of it (its response, the end of the output, a
	// call given up) owns that request's outcome: that is what makes
	// each outcome happen exactly once.
	mu      sync.Mutex
	pending map[string]chan<- wireReply
	// closed is closed when the child's stdout ends.
	closed chan struct{}

	// greeted is set once the child's answer to the handshake went by,
	// tasks when that answer declared task-augmented tools/call
	// (capabilities.tasks.requests.tools.call, 2025-11-25), which the
	// SDK's client does not keep (childtask.go).
	greeted, tasks atomic.Bool
}

// wireReply is how a request ended: a response with exactly one of
// result and err set, or lost when the child's output ended first.
type wireReply struct {
	result []byte
	err    *jsonrpc.Error
	lost   bool
}

func newWire(w *lockedStdin) *wire {
	return &wire{w: w, pending: map[string]chan<- wireReply{}, closed: make(chan struct{})}
}

// begin reserves an id whose response, or the end of the output, is sent
// on reply, once, by the child's reading goroutine; giveUp takes the id
// back instead. ok is false when the output has already ended.
func (wr *wire) begin() (id string, reply <-chan wireReply, ok bool) {
	id = wireIDPrefix + strconv.FormatUint(wr.next.Add(1), 10)
	ch := make(chan wireReply, 1)
	wr.mu.Lock()
	defer wr.mu.Unlock()
	select {
	case <-wr.closed:
		return id, nil, false
	default:
	}
	wr.pending[id] = ch
	return id, ch, true
}

// giveUp takes id back from the requests in flight. It reports whether
// it still was in flight: if so nothing will be sent on its reply, and
// the caller owns its outcome; if not, the reply is sent or on its way.
func (wr *wire) giveUp(id string) bool {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	if _, ok := wr.pending[id]; !ok {
		return false
	}
	delete(wr.pending, id)
	return true
}

// take is offered every JSON line the child writes, on its reading
// goroutine; it returns true for a response to one of our requests, which
// the SDK then never sees. A line without our prefix costs one
// bytes.Contains.
func (wr *wire) take(line []byte) bool {
	if !wr.greeted.Load() {
		wr.greet(line)
	}
	if !bytes.Contains(line, []byte(wireIDPrefix)) {
		return false
	}
	var id, result, errObj []byte
	hasMethod := false
	if rawjson.Members(line, func(name string, v []byte) bool {
		switch name {
		case "id":
			id = v
		case "result":
			result = v
		case "error":
			errObj = v
		case "method":
			hasMethod = true
		}
		return true
	}) != nil || hasMethod {
		return false
	}
	key, ok := rawjson.String(id)
	if !ok || len(key) <= len(wireIDPrefix) || key[:len(wireIDPrefix)] != wireIDPrefix {
		return false
	}
	wr.mu.Lock()
	reply := wr.pending[key]
	delete(wr.pending, key)
	wr.mu.Unlock()
	if reply == nil {
		return true // an answer to a call already given up on
	}
	var r wireReply
	switch {
	case errObj != nil:
		we := &jsonrpc.Error{}
		if json.Unmarshal(errObj, we) != nil || we.Message == "" && we.Code == 0 {
			we = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the child answered with a malformed error"}
		}
		r.err = we
	case result != nil && firstNonSpace(result) == '{':
		r.result = result
	default:
		r.err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the child answered without a result object"}
	}
	reply <- r
	return true
}

// close marks the child's output ended: every request in flight is
// settled as lost.
func (wr *wire) close() {
	wr.mu.Lock()
	select {
	case <-wr.closed:
		wr.mu.Unlock()
		return
	default:
	}
	close(wr.closed)
	lost := wr.pending
	wr.pending = map[string]chan<- wireReply{}
	wr.mu.Unlock()
	for _, reply := range lost {
		reply <- wireReply{lost: true}
	}
}

// send writes one message line to the child.
func (wr *wire) send(line []byte) error {
	select {
	case <-wr.closed:
		return errors.New("connection closed")
	default:
	}
	_, err := wr.w.Write(line)
	return err
}

// greet reads the child's answer to the handshake, the first response
// that holds a result with capabilities, for its tasks capability.
func (wr *wire) greet(line []byte) {
	if tasks, ok := handshakeTasks(line); ok {
		wr.tasks.Store(tasks)
		wr.greeted.Store(true)
	}
}

// handshakeTasks reads msg, a message from a child, as its answer to the
// handshake: ok when it is one (a response whose result holds
// capabilities), tasks when those declare task-augmented tools/call
// (capabilities.tasks.requests.tools.call, 2025-11-25), which the SDK's
// client does not keep.
func handshakeTasks(msg []byte) (tasks, ok bool) {
	if !bytes.Contains(msg, []byte(`"capabilities"`)) || rawjson.Member(msg, "method") != nil {
		return false, false
	}
	caps := rawjson.Member(rawjson.Member(msg, "result"), "capabilities")
	if caps == nil {
		return false, false
	}
	call := rawjson.Member(rawjson.Member(rawjson.Member(rawjson.Member(caps, "tasks"), "requests"), "tools"), "call")
	return firstNonSpace(call) == '{', true
}

// carry writes the call req as one line under an id of the wire's own
// and waits for its answer, the end of the child's output, its deadline
// or the end of ctx. Whoever takes the id out of the pending set owns the
// outcome: the child's reader (the answer, or the end of its output) or
// this call (the deadline, ctx, or a failed write), which then tells the
// child it gave up, on a goroutine of its own: the caller has its
// answer, and a child slow to read its input (the write is bounded, see
// lockedStdin) must not delay it.
func (wr *wire) carry(ctx context.Context, req toolRequest) (answer, error) {
	// The timeout counts from before the write: a write to a child that
	// reads slowly takes part of it.
	timer := time.NewTimer(time.Until(req.deadline))
	defer timer.Stop()
	id, reply, ok := wr.begin()
	if !ok {
		return answer{}, errLost
	}
	line, err := callLine(id, &req)
	if err != nil {
		wr.giveUp(id)
		return answer{}, err
	}
	if err := wr.send(line); err != nil && wr.giveUp(id) {
		if errors.Is(err, errStoppedReading) {
			return answer{}, err
		}
		return answer{}, errLost
	}
	raw, err := wr.await(ctx, id, reply, timer)
	return answer{raw: raw}, err
}

// await waits for the answer to the request id, the end of the child's
// output, the timer or the end of ctx, and tells the child when it gave
// up (see carry).
func (wr *wire) await(ctx context.Context, id string, reply <-chan wireReply, timer *time.Timer) ([]byte, error) {
	var (
		r      wireReply
		reason string
		err    error
	)
	select {
	case r = <-reply:
	case <-timer.C:
		reason, err = "timed out", context.DeadlineExceeded
	case <-ctx.Done():
		reason, err = "the client cancelled the call", ctx.Err()
	}
	if reason != "" {
		if wr.giveUp(id) {
			go wr.cancel(id, reason)
			return nil, err
		}
		r = <-reply // the answer won the race
	}
	switch {
	case r.lost:
		return nil, errLost
	case r.err != nil:
		return nil, r.err
	}
	return r.result, nil
}

// request sends the request method with params (a JSON object) as one
// line under an id of the wire's own and returns its result, as carry
// does for a tools/call: the tasks/* requests of a child's own task
// (childtask.go) and the tools list they read.
func (wr *wire) request(ctx context.Context, method string, params []byte, deadline time.Time) ([]byte, error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	id, reply, ok := wr.begin()
	if !ok {
		return nil, errLost
	}
	line := make([]byte, 0, len(params)+len(method)+64)
	line = append(line, `{"jsonrpc":"2.0","id":"`...)
	line = append(line, id...)
	line = append(line, `","method":`...)
	line = rawjson.Quote(line, method)
	line = append(line, `,"params":`...)
	line = append(line, params...)
	line = append(line, "}\n"...)
	if err := wr.send(line); err != nil && wr.giveUp(id) {
		if errors.Is(err, errStoppedReading) {
			return nil, err
		}
		return nil, errLost
	}
	return wr.await(ctx, id, reply, timer)
}

// callLine is the tools/call req as one line under id. The arguments go
// as the bytes they are, on one line: a line break between their tokens
// (JSON allows it; a line-framed transport does not) is compacted away.
func callLine(id string, req *toolRequest) ([]byte, error) {
	args := req.args
	if bytes.IndexByte(args, '\n') >= 0 {
		var flat bytes.Buffer
		if err := json.Compact(&flat, args); err != nil {
			return nil, err
		}
		args = flat.Bytes()
	}
	line := make([]byte, 0, len(args)+len(req.name)+len(req.state)+128)
	line = append(line, `{"jsonrpc":"2.0","id":"`...)
	line = append(line, id...)
	line = append(line, `","method":"tools/call","params":{"name":`...)
	line = rawjson.Quote(line, req.name)
	line = append(line, `,"arguments":`...)
	line = append(line, args...)
	if len(req.meta) > 0 {
		line = append(line, `,"_meta":{`...)
		for i, k := range slices.Sorted(maps.Keys(req.meta)) {
			if i > 0 {
				line = append(line, ',')
			}
			line = rawjson.Quote(line, k)
			line = append(line, ':')
			var err error
			if line, err = appendValue(line, req.meta[k]); err != nil {
				return nil, err
			}
		}
		line = append(line, '}')
	}
	if req.responses != nil {
		line = append(line, `,"inputResponses":`...)
		var err error
		if line, err = appendValue(line, req.responses); err != nil {
			return nil, err
		}
	}
	if req.state != "" {
		line = append(line, `,"requestState":`...)
		line = rawjson.Quote(line, req.state)
	}
	if req.taskTTL > 0 {
		line = append(line, `,"task":{"ttl":`...)
		line = strconv.AppendInt(line, req.taskTTL.Milliseconds(), 10)
		line = append(line, '}')
	}
	return append(line, "}}\n"...), nil
}

// appendValue appends v as JSON: a string quoted, anything else as
// encoding/json writes it.
func appendValue(line []byte, v any) ([]byte, error) {
	if s, ok := v.(string); ok {
		return rawjson.Quote(line, s), nil
	}
	b, err := json.Marshal(v)
	return append(line, b...), err
}

// cancel tells the child a request is given up, as the SDK does for its
// own requests.
func (wr *wire) cancel(id, reason string) {
	line := make([]byte, 0, 128)
	line = append(line, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"`...)
	line = append(line, id...)
	line = append(line, `","reason":`...)
	line = rawjson.Quote(line, reason)
	line = append(line, "}}\n"...)
	_ = wr.send(line)
}

func firstNonSpace(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// lockedStdin serialises whole writes to a child's stdin, combining the
// ones that meet (package linewrite). The SDK's transport writes each
// message with a single Write, so sharing it keeps its lines and the fast
// path's from interleaving.
//
// Each write to the pipe must finish within a bound (the child's request
// timeout): a child that stopped reading its input would otherwise block
// the write once the pipe is full (64 KiB on Linux), and every later
// write, the SDK's and the cancel notifications included, behind it for
// good. A write that misses the bound may have left part of a line in
// the pipe, so the child's input is broken: every write from then on
// fails with errStoppedReading (linewrite writes nothing after an error)
// and stuck runs once, to stop the process; its output then ends, the
// calls in flight are settled as lost and the run loop restarts it.
type lockedStdin struct {
	lines *linewrite.Writer
	w     io.WriteCloser
}

// errStoppedReading fails a write to a child that took none of its input
// for the whole bound.
var errStoppedReading = errors.New("the server stopped reading its input")

// newLockedStdin bounds each write by bound when w takes write deadlines
// (the *os.File of os/exec's StdinPipe, an os.Pipe the runtime polls on
// Unix); with bound 0, or on a pipe without deadlines (Windows), writes
// are not bounded.
func newLockedStdin(w io.WriteCloser, bound time.Duration, stuck func()) *lockedStdin {
	out := io.Writer(w)
	if d, ok := w.(deadlineWriter); ok && bound > 0 && d.SetWriteDeadline(time.Time{}) == nil {
		out = &boundedWriter{w: d, bound: bound, stuck: stuck}
	}
	return &lockedStdin{lines: linewrite.New(out), w: w}
}

func (l *lockedStdin) Write(p []byte) (int, error) { return l.lines.Write(p) }

func (l *lockedStdin) Close() error { return l.w.Close() }

type deadlineWriter interface {
	io.Writer
	SetWriteDeadline(time.Time) error
}

// boundedWriter gives each write a deadline. linewrite calls it from one
// goroutine at a time and never again after an error, so stuck runs at
// most once.
type boundedWriter struct {
	w     deadlineWriter
	bound time.Duration
	stuck func()
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	// Moving a deadline is a timer update in the runtime, no system call.
	_ = b.w.SetWriteDeadline(time.Now().Add(b.bound))
	n, err := b.w.Write(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if b.stuck != nil {
			go b.stuck() // off the writer's path: it stops the process
		}
		return n, errStoppedReading
	}
	return n, err
}
