package stdio

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/rawjson"
)

// Take is the router's side of the byte path over stdio: given a request
// the connection read, the call to run, or false to leave the message to
// the SDK path. Serve installs ingress.Router.Take.
type Take func(m ingress.Message) (ingress.Call, bool)

// bytePath is the connection's byte path: what take carries, and the ids
// of the calls it runs, so that a notifications/cancelled cancels the
// right call. A request reusing the id of one still running never
// reaches it: the connection refuses it, as the SDK refuses one of its
// own.
type bytePath struct {
	take  Take
	calls ingress.Inflight
}

// Carry installs the byte path: from then on each clean request (and
// each notifications/cancelled) the connection reads is offered to take,
// in reading order, on the reading goroutine, before the SDK decodes it;
// take must not block (Serve's waits, once, for its session to connect). A call it takes runs on the goroutine that read
// it, answered through the connection with the client's id and the
// result as bytes, while reading goes on on another, so calls run
// concurrently as the SDK runs its own. It may be called at any time;
// nil removes the byte path.
func (t *Transport) Carry(take Take) {
	if take == nil {
		t.bytePath.Store(nil)
		return
	}
	t.bytePath.Store(&bytePath{take: take})
}

// offer offers m to the byte path; run is the call to run, nil for a
// cancellation it handled, and ok false leaves m to the SDK path.
func (b *bytePath) offer(m ingress.Message, r ingress.Replier) (run func(), ok bool) {
	switch {
	case m.Method == ingress.MethodCancel:
		return nil, b.calls.Cancel(m)
	case m.ID != nil:
		return b.call(m, r)
	}
	return nil, false
}

// call takes a request and returns it to run, or false.
func (b *bytePath) call(m ingress.Message, r ingress.Replier) (func(), bool) {
	c, ok := b.take(m)
	if !ok {
		return nil, false
	}
	ctx, cancel := context.WithCancel(context.Background())
	if !b.calls.Begin(m.ID, cancel) {
		cancel()
		return nil, false
	}
	return func() {
		defer cancel()
		res, raw, err := c.Run(ctx)
		// The id is free again once answered: a client may reuse it.
		b.calls.End(m.ID)
		ingress.Answer(r, m.ID, res, raw, err)
	}, true
}

// goroutines runs functions on goroutines that outlive them. A proxied
// call grows its goroutine's stack past the runtime's starting size
// (router stages, schema validation, the records), so a new goroutine per
// call would copy its stack two or three times each call; one that waits
// for the next task keeps what it grew until a collection finds it idle
// and shrinks it. At most maxIdle wait, the rest end.
type goroutines struct {
	tasks chan func()
	idle  atomic.Int32
}

const maxIdleGoroutines = 16

// readers are where reading goes on after a call was taken.
var readers = &goroutines{tasks: make(chan func())}

func (g *goroutines) run(f func()) {
	select {
	case g.tasks <- f: // a waiting goroutine took it
	default:
		go g.loop(f)
	}
}

func (g *goroutines) loop(f func()) {
	for {
		f()
		if g.idle.Add(1) > maxIdleGoroutines {
			g.idle.Add(-1)
			return
		}
		f = <-g.tasks
		g.idle.Add(-1)
	}
}

// Reply answers a request the byte path took (ingress.Replier).
func (c *Conn) Reply(id, result []byte) error {
	return c.respond(ingress.IDKey(id), ingress.Response(id, result))
}

// Notify sends the client a notification outside any request
// (ingress.Via.Notify): a task's change of status.
func (t *Transport) Notify(method string, params []byte) error {
	c := t.conn.Load()
	if c == nil {
		return errors.New("stdio: not connected")
	}
	line := make([]byte, 0, len(method)+len(params)+48)
	line = append(line, `{"jsonrpc":"2.0","method":`...)
	line = rawjson.Quote(line, method)
	if len(params) > 0 {
		line = append(line, `,"params":`...)
		line = append(line, params...)
	}
	line = append(line, '}')
	return c.writeLine(line)
}

// ReplyError answers a request the byte path took with an error
// (ingress.Replier).
func (c *Conn) ReplyError(id []byte, code int64, message string, data []byte) error {
	return c.respond(ingress.IDKey(id), ingress.ErrorResponse(id, code, message, data))
}
