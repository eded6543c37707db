package proxy

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/session"
)

// Children that speak both eras.
//
// A child is booted in the old era (child.go), and a go-sdk child, which
// speaks both, keeps the server→client requests its old-era tools were
// written for. But the go-sdk fixes a session's era when it starts: for
// an old-era session a tool's input_required is answered by the server's
// own requests to the router, which a caller of the new era cannot take,
// and in a new-era session an old-era tool's own request is refused. One
// connection cannot give each caller its era, so the calls of callers of
// the new era go to a second connection of the child, of the new era:
// there the child's input_required reaches them exactly as a child of the
// new era alone answers it (sealed to the call, era.go).
//
// The second connection opens on the first call that needs it, never at
// boot, so a router no new-era client calls runs one process per child as
// before: for a stdio child a second process from the same command,
// environment and sandbox; for a streamable HTTP child the same URL asked
// the new era's way (stateless requests). It is asked for the new era
// (server/discover); a child that answers with initialize's era instead
// speaks the old era only, is remembered as such for its life, and its
// new-era callers use its one connection as before. A stdio child's two
// processes keep their own state: what a new-era caller's call changes is
// what the second process serves, so the second connection is subscribed
// to every resource sessions subscribed to, and its updates are passed on
// as the first's are. It closes with the
// child's first connection (a restart, a reload, shutdown) and when it
// dies; the next call of the new era opens it again. An SSE child (HTTP
// with SSE, an old era's transport) has no second connection.
type dualState struct {
	mu sync.Mutex
	// oldOnly is set once the child answered the new era's question with
	// initialize: it speaks the old era only.
	oldOnly bool
	conn    *conn
	// dialing is closed when the open in progress ends, either way.
	dialing chan struct{}
	// retryAt is when a connection that failed to open may be tried
	// again; until then new-era calls use the first connection.
	retryAt time.Time
	// closes counts closeNewEra's calls: a connection dialled while the
	// first connection restarted belongs to the child before the restart.
	closes int
}

// dualRetry is how long a second connection that failed to open is not
// tried again.
const dualRetry = 30 * time.Second

// connFor is the connection a request of sess goes to, waiting for a
// boot in progress (session): the child's own, or for a caller of the
// new era when that one is of the old era and the child speaks both
// eras, its connection of the new era (opened now when it is not open
// yet, and when it cannot be, the child's own).
func (c *child) connFor(ctx context.Context, sess *session.Session) (*conn, error) {
	k, err := c.session(ctx)
	if err != nil || k.newEra || !roundTrips(sess) || c.spec.Transport == config.TransportSSE {
		return k, err
	}
	if second := c.newEraConn(ctx); second != nil {
		return second, nil
	}
	return k, nil
}

// reopenedByRunLoop reports whether k is the connection the child's
// run loop opens again when it ends (the first one); the second, of the
// new era, is opened again by the next call of that era instead.
func (k *conn) reopenedByRunLoop() bool { return !k.second }

// newEraConn is the child's connection of the new era, opened now when
// none is; nil when the child speaks the old era only or the connection
// cannot be opened (yet).
func (c *child) newEraConn(ctx context.Context) *conn {
	d := &c.dual
	for {
		d.mu.Lock()
		switch {
		case d.oldOnly:
			d.mu.Unlock()
			return nil
		case d.conn != nil:
			k := d.conn
			d.mu.Unlock()
			return k
		case d.dialing != nil:
			wait := d.dialing
			d.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil
			}
		case time.Now().Before(d.retryAt):
			d.mu.Unlock()
			return nil
		}
		wait := make(chan struct{})
		d.dialing = wait
		closes := d.closes
		d.mu.Unlock()
		// Opened under the child's life, not the call's: calls waiting
		// for it share it, and one that gives up does not close it.
		k, oldOnly, err := c.dialNewEra()
		d.mu.Lock()
		d.dialing = nil
		close(wait)
		switch {
		case c.ctx.Err() != nil:
			// The child stopped meanwhile: nothing of it may stay.
			d.mu.Unlock()
			if k != nil {
				k.stop(c.sup.opts.ShutdownGrace)
			}
			return nil
		case d.closes != closes:
			// The first connection restarted meanwhile: this one closes
			// with it, and the call asks again.
			d.mu.Unlock()
			if k != nil {
				k.stop(c.sup.opts.ShutdownGrace)
			}
			continue
		case err != nil:
			d.retryAt = time.Now().Add(dualRetry)
			d.mu.Unlock()
			c.sup.log.Info("[EVOKORE] Cannot open a server's "+era.SessionlessVersion+" connection; its calls of that era use its "+era.SessionVersion+" one", "server", c.spec.ID, "err", c.redact.Replace(err.Error()))
			return nil
		case oldOnly:
			d.oldOnly = true
			d.mu.Unlock()
			return nil
		}
		d.conn = k
		d.mu.Unlock()
		c.sup.log.Info("[EVOKORE] A server speaks both eras; its "+era.SessionlessVersion+" callers are served on a connection of that era", "server", c.spec.ID)
		go c.superviseNewEra(k)
		// Off the caller's way: one Subscribe per subscribed resource
		// would otherwise delay the call that opened the connection.
		go c.sup.resubscribe(c, k.cs)
		return k
	}
}

// dialNewEra opens a connection of the new era to the child. oldOnly
// reports a child that answered it in the old era.
func (c *child) dialNewEra() (k *conn, oldOnly bool, err error) {
	spec, err := c.resolveSpec()
	if err != nil {
		return nil, false, err
	}
	// The first connection listens for list changes and takes the
	// child's requests of the old era; this one carries requests, and
	// the updates of the resources sessions subscribed to (a tool called
	// here changes what this process serves).
	opts := c.clientOptions(nil)
	opts.ToolListChangedHandler = nil
	c.sup.contentHandlers(c, opts)
	opts.PromptListChangedHandler, opts.ResourceListChangedHandler = nil, nil
	k, err = c.connect(c.ctx, spec, era.SessionlessVersion, opts)
	if err != nil {
		return nil, false, err
	}
	if !k.newEra {
		k.stop(c.sup.opts.ShutdownGrace)
		return nil, true, nil
	}
	k.second = true
	return k, false, nil
}

// superviseNewEra forgets the second connection once it closes, and
// makes sure its process is gone.
func (c *child) superviseNewEra(k *conn) {
	_ = k.cs.Wait()
	k.stop(c.sup.opts.ShutdownGrace)
	c.dual.mu.Lock()
	mine := c.dual.conn == k
	if mine {
		c.dual.conn = nil
	}
	c.dual.mu.Unlock()
	if mine && c.ctx.Err() == nil {
		c.sup.log.Info("[EVOKORE] A server's "+era.SessionlessVersion+" connection closed; the next call of that era opens it again", "server", c.spec.ID)
	}
}

// onSecond runs do on the child's open connection of the new era, if
// any: a child of both eras changes in either process, so what a
// session subscribed to is subscribed to on both.
func (c *child) onSecond(do func(*mcp.ClientSession) error) error {
	c.dual.mu.Lock()
	k := c.dual.conn
	c.dual.mu.Unlock()
	if k == nil {
		return nil
	}
	return do(k.cs)
}

// closeNewEra closes the second connection with the first.
func (c *child) closeNewEra() {
	c.dual.mu.Lock()
	k := c.dual.conn
	c.dual.conn = nil
	c.dual.closes++
	c.dual.mu.Unlock()
	if k != nil {
		k.stop(c.sup.opts.ShutdownGrace)
	}
}
