package proxy

import (
	"reflect"
	"slices"
	"time"

	"github.com/evokore/evokore/internal/config"
)

// childSet is one configuration's children: in config order, and by id.
// It never changes once published; Reconfigure publishes a new one.
type childSet struct {
	list []*child
	byID map[string]*child
}

func (cs *childSet) add(c *child) {
	cs.list = append(cs.list, c)
	cs.byID[c.spec.ID] = c
}

// children are the configured children, in config order.
func (s *Supervisor) children() []*child { return s.set.Load().list }

// child is the configured child with the given id.
func (s *Supervisor) child(id string) (*child, bool) {
	c, ok := s.set.Load().byID[id]
	return c, ok
}

// current reports whether c is the child its id names now.
func (s *Supervisor) current(c *child) bool {
	cur, ok := s.child(c.spec.ID)
	return ok && cur == c
}

// launch starts c's run loop; firstDone, when set, is called after its
// first boot attempt. reconf is held.
func (s *Supervisor) launch(c *child, firstDone func()) {
	c.mu.Lock()
	c.launched = true
	c.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(c.exited)
		c.run(c.ctx, s.caps, firstDone)
	}()
}

// Change is what Reconfigure did, by server id, each in config order.
type Change struct {
	Added     []string
	Removed   []string
	Restarted []string
	Kept      []string
}

// Empty reports whether no child was added, removed or restarted.
func (c Change) Empty() bool {
	return len(c.Added) == 0 && len(c.Removed) == 0 && len(c.Restarted) == 0
}

// Reconfigure makes servers the configured children, after a reload of
// mcp.config.json. A server whose definition is unchanged keeps its child
// untouched: same process, same session, calls in flight undisturbed. A
// new server starts (at once when the first boot round has begun, else
// with it). A removed server's tools leave the catalog at once and no new
// call reaches it; the calls already forwarded are answered before its
// process is stopped, each within its request timeout. A changed server
// is a removal and an addition: its replacement boots while the old
// process finishes what it was asked, and calls made meanwhile wait for
// the replacement's boot.
//
// Only the settings the policy reads at call time (rateLimit, cooldownMs)
// and the description can change without a restart; any other change to
// a server's definition restarts it.
func (s *Supervisor) Reconfigure(servers []config.Server) Change {
	s.reconf.Lock()
	defer s.reconf.Unlock()
	if s.ctx.Err() != nil {
		return Change{}
	}
	old := s.set.Load()
	next := &childSet{byID: make(map[string]*child, len(servers))}
	var ch Change
	var fresh, gone []*child
	for _, spec := range servers {
		prev, ok := old.byID[spec.ID]
		switch {
		case ok && !needsRestart(prev.spec, spec):
			next.add(prev)
			ch.Kept = append(ch.Kept, spec.ID)
			continue
		case ok:
			ch.Restarted = append(ch.Restarted, spec.ID)
			gone = append(gone, prev)
		default:
			ch.Added = append(ch.Added, spec.ID)
		}
		c := newChild(s, spec)
		next.add(c)
		fresh = append(fresh, c)
	}
	ids := make([]string, 0, len(servers))
	for _, spec := range servers {
		ids = append(ids, spec.ID)
	}
	var dropped []string
	for _, c := range old.list {
		if _, ok := next.byID[c.spec.ID]; !ok {
			ch.Removed = append(ch.Removed, c.spec.ID)
			dropped = append(dropped, c.spec.ID)
			gone = append(gone, c)
		}
	}
	if ch.Empty() && slices.Equal(ids, idsOf(old.list)) {
		return ch
	}
	// From here on lookups find the new children; the catalog follows in
	// one snapshot, so each session is told once.
	s.set.Store(next)
	s.opts.Catalog.SetServers(ids, dropped)
	for _, c := range fresh {
		s.publishCached(c)
		if s.started && !c.spec.Disabled {
			s.launch(c, nil)
		}
	}
	for _, c := range gone {
		s.retireLocked(c)
	}
	return ch
}

func idsOf(cs []*child) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.spec.ID
	}
	return out
}

// retireLocked drains c in the background and then stops it. The wait is
// bounded: a call is bounded by the request timeout, after waiting up to
// the boot timeout for a boot; a grace second covers the answer's trip.
// reconf is held.
func (s *Supervisor) retireLocked(c *child) {
	s.retiring[c] = struct{}{}
	drained := c.retire()
	bound := s.requestTimeout(c.spec) + s.bootTimeout(c.spec) + time.Second
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTimer(bound)
		defer t.Stop()
		select {
		case <-drained:
		case <-t.C:
			s.log.Info("[EVOKORE] Stopping a server with calls still open: they did not answer in time after the reload", "server", c.spec.ID, "within", bound)
		case <-s.ctx.Done():
		}
		c.shutdown(s.opts.ShutdownGrace)
		<-c.exitedOrNever()
		s.reconf.Lock()
		delete(s.retiring, c)
		s.reconf.Unlock()
	}()
}

// exitedOrNever is the run loop's end, or a closed channel for a child
// whose loop never started (disabled, or added before the first boot).
func (c *child) exitedOrNever() <-chan struct{} {
	c.mu.Lock()
	started := c.launched
	c.mu.Unlock()
	if !started {
		done := make(chan struct{})
		close(done)
		return done
	}
	return c.exited
}

// needsRestart reports whether moving from a to b needs a new child: any
// change but those to the settings read at call time from the
// configuration rather than from the child.
func needsRestart(a, b config.Server) bool {
	a.RateLimit, b.RateLimit = nil, nil
	a.CooldownMs, b.CooldownMs = nil, nil
	a.LimitScope, b.LimitScope = "", ""
	a.Description, b.Description = "", ""
	return !reflect.DeepEqual(a, b)
}
