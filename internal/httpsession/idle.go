package httpsession

import "time"

// Idle sessions.
//
// A session that has had no POST in flight for the TTL is closed, as the
// go-sdk's SessionTimeout would close it; the handler keeps the count
// because the byte path answers most POSTs without the SDK seeing them. A
// GET stream alone does not keep a session alive (nor does it for the
// SDK): a client that only listens sends a ping now and then. The record
// in the store expires on its own.

// sweepEvery is how often idle sessions are looked for: a tenth of the
// TTL, within bounds.
func sweepEvery(ttl time.Duration) time.Duration {
	return min(max(ttl/10, 10*time.Millisecond), 30*time.Second)
}

// startSweeping starts looking for idle sessions, once, when the first
// session opens (a constructor starts nothing).
func (h *Handler) startSweeping() {
	if h.opts.TTL <= 0 {
		return
	}
	h.sweepOnce.Do(func() {
		go func() {
			t := time.NewTicker(sweepEvery(h.opts.TTL))
			defer t.Stop()
			for {
				select {
				case <-h.sweepStop:
					return
				case now := <-t.C:
					h.closeIdle(now)
				}
			}
		}()
	})
}

func (h *Handler) stopSweeping() { h.stopOnce.Do(func() { close(h.sweepStop) }) }

// closeIdle closes the sessions idle for the TTL at now.
func (h *Handler) closeIdle(now time.Time) {
	h.mu.Lock()
	var idle []*entry
	for _, e := range h.live {
		if e.idleSince(now) >= h.opts.TTL {
			idle = append(idle, e)
		}
	}
	h.mu.Unlock()
	for _, e := range idle {
		e.v.Close() // OnEnd removes it from live
	}
}

// idleSince is how long the session has had no POST in flight.
func (e *entry) idleSince(now time.Time) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.posts > 0 {
		return 0
	}
	if e.lastPost.IsZero() {
		e.lastPost = now
	}
	return now.Sub(e.lastPost)
}

func (e *entry) postStarted() {
	e.mu.Lock()
	e.posts++
	e.mu.Unlock()
}

func (e *entry) postDone() {
	e.mu.Lock()
	e.posts--
	e.lastPost = time.Now()
	e.mu.Unlock()
}
