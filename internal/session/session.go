// Package session holds the state the router keeps per client session:
// its id, its role, and the tools discovery activated for it. A session is
// shared by the session view that serves it and the pipeline that runs its
// calls; it knows nothing about transports.
package session

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"sync"
	"time"
)

// DefaultMaxActive bounds the tools one session can have activated; the
// least recently activated go first.
const DefaultMaxActive = 256

// Session is one client session. Its zero value is usable: an idle
// session with no id, no role and no activations, on the real clock (New
// adds an id, a role and the creation time).
type Session struct {
	// ID is stable for the session's life: "stdio-<uuid>" for stdio, the
	// Mcp-Session-Id over HTTP.
	ID string
	// Role is the RBAC role calls run under; "" means no role.
	Role string
	// Identity is who the session acts for.
	Identity Identity
	// Created is when the session started.
	Created time.Time
	// Peer is the client; nil until the session is connected.
	Peer Peer
	// Stateless marks the stand-in for one request of a client of the
	// sessionless protocol (MCP 2026-07-28): it lives for that request, so
	// nothing the client does changes what it lists (docs/protocol.md).
	Stateless bool

	// TTL is how long the session may stay idle before its activations
	// are dropped; zero keeps them forever.
	TTL time.Duration
	// MaxActive bounds the activations; zero means DefaultMaxActive.
	MaxActive int
	// Now is the clock; nil means time.Now. Tests replace it.
	Now func() time.Time

	mu          sync.Mutex
	changed     chan struct{} // made on first use
	generation  uint64
	invalidated bool
	lastSeen    time.Time         // zero until the first Touch of a zero Session
	active      map[string]uint64 // name → activation order; made on first use
	seq         uint64
	// inbound is the bearer token the client's latest request came
	// with (Inbound).
	inbound string
}

// SetInbound records the bearer token the client's latest request was
// authenticated with, for a child that trades it for its own (token
// exchange). It lives in this process's memory only: no record, log or
// store ever holds it.
func (s *Session) SetInbound(token string) {
	s.mu.Lock()
	s.inbound = token
	s.mu.Unlock()
}

// Inbound is the bearer token SetInbound recorded, "" when the session's
// client is not authenticated by one (stdio, HTTP without
// authentication).
func (s *Session) Inbound() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inbound
}

func (s *Session) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// changedLocked returns the channel Changed hands out, making it on first
// use so the zero Session works.
func (s *Session) changedLocked() chan struct{} {
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// activeLocked returns the activation map, making it on first use.
func (s *Session) activeLocked() map[string]uint64 {
	if s.active == nil {
		s.active = map[string]uint64{}
	}
	return s.active
}

// Identity is who a session acts for: the authenticated subject over
// HTTP (empty over stdio, where the client is whoever started the
// process), and the tenant its state is scoped to.
type Identity struct {
	Subject string
	Tenant  string
}

// New starts a session.
func New(id, role string) *Session {
	now := time.Now()
	return &Session{ID: id, Role: role, Created: now, lastSeen: now}
}

// NewID returns "<prefix>-<uuid v4>".
func NewID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return prefix + "-" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Changed is closed the next time the session's visible tools change.
func (s *Session) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changedLocked()
}

// signalLocked wakes everyone waiting on Changed.
func (s *Session) signalLocked() {
	s.generation++
	close(s.changedLocked())
	s.changed = make(chan struct{})
}

// Generation counts the changes to what the session lists; paging cursors
// carry it so a cursor from an older listing starts over.
func (s *Session) Generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.generation
}

// Invalidate tells the session's client to list its tools again although
// their names did not change (their schemas did).
func (s *Session) Invalidate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.invalidated = true
	s.signalLocked()
}

// TakeInvalidated reports and clears a pending Invalidate.
func (s *Session) TakeInvalidated() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	was := s.invalidated
	s.invalidated = false
	return was
}

// Touch records activity. A session idle for longer than its TTL loses
// its activations first, as if it were new; Touch reports whether that
// happened.
func (s *Session) Touch() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	// A zero Session was never seen: its first Touch starts the clock.
	expired := s.TTL > 0 && !s.lastSeen.IsZero() && now.Sub(s.lastSeen) > s.TTL && len(s.active) > 0
	s.lastSeen = now
	if expired {
		clear(s.active)
		s.signalLocked()
	}
	return expired
}

// Activate adds tools to what the session lists and returns the names that
// were not active yet. Re-activating a name makes it the most recent.
func (s *Session) Activate(names ...string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	active := s.activeLocked()
	var added []string
	for _, n := range names {
		if _, ok := active[n]; !ok {
			added = append(added, n)
		}
		s.seq++
		active[n] = s.seq
	}
	limit := s.MaxActive
	if limit <= 0 {
		limit = DefaultMaxActive
	}
	for len(s.active) > limit {
		oldest, min := "", ^uint64(0)
		for n, q := range s.active {
			if q < min {
				oldest, min = n, q
			}
		}
		delete(s.active, oldest)
	}
	if len(added) > 0 {
		s.signalLocked()
	}
	return added
}

// Active reports whether discovery activated the tool for this session.
func (s *Session) Active(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.active[name]
	return ok
}

// Activations lists the activated tools, oldest activation first: what a
// session store keeps so another process can restore them in order.
func (s *Session) Activations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.active))
	for n := range s.active {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(s.active[a], s.active[b]) })
	return names
}

// SetActivations replaces the activations with names (oldest first), as
// a session store last recorded them; it signals Changed only when the
// set differs, and reports whether it did.
func (s *Session) SetActivations(names []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := s.MaxActive
	if limit <= 0 {
		limit = DefaultMaxActive
	}
	if len(names) > limit {
		// A record is not trusted to hold more than a session may: the
		// most recent ones stay, as Activate would have kept them.
		names = names[len(names)-limit:]
	}
	same := len(names) == len(s.active)
	for _, n := range names {
		if _, ok := s.active[n]; !ok {
			same = false
			break
		}
	}
	if same {
		return false
	}
	active := s.activeLocked()
	clear(active)
	for _, n := range names {
		s.seq++
		active[n] = s.seq
	}
	s.signalLocked()
	return true
}
