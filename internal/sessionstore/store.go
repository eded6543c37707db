// Package sessionstore keeps what an HTTP session needs to outlive the
// process that started it: its role, identity and activations. A replica
// that meets a session id it does not know resumes the session from the
// store; a session deleted here is gone for every replica.
//
// The router owns a session while it serves it and saves a Record when
// the session changes; the store never holds live objects, so any
// backend (memory, files, Redis) serves the same contract.
package sessionstore

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"
)

// ErrNotFound is returned by Load for a session the store does not hold,
// or holds only expired.
var ErrNotFound = errors.New("session not found")

// Record is a session as the store keeps it.
type Record struct {
	// ID is the Mcp-Session-Id.
	ID string `json:"sessionId"`
	// Role is the RBAC role the session's calls run under.
	Role string `json:"role,omitempty"`
	// Subject is the authenticated subject (the JWT sub); Tenant scopes the
	// session: a session is resumed only by a caller of the same tenant.
	Subject string `json:"subject,omitempty"`
	Tenant  string `json:"tenantId,omitempty"`
	// Activations are the tools discovery activated, oldest first.
	Activations []string `json:"activatedTools"`
	// Metadata is free-form (client name and version, transport).
	Metadata map[string]string `json:"metadata,omitempty"`
	// Created and LastSeen bound the session's life; a session idle past
	// the store's TTL is expired.
	Created  time.Time `json:"createdAt"`
	LastSeen time.Time `json:"lastAccessedAt"`
}

// Store is where sessions are kept. Implementations are safe for
// concurrent use by many sessions and, for shared backends, by many
// processes.
type Store interface {
	// Load returns the session with id, or ErrNotFound.
	Load(ctx context.Context, id string) (Record, error)
	// Save creates or replaces a session and refreshes its expiry.
	Save(ctx context.Context, r Record) error
	// Delete forgets a session; deleting an unknown id is not an error.
	Delete(ctx context.Context, id string) error
	// List returns every live session, newest first.
	List(ctx context.Context) ([]Record, error)
	// Close releases the store's connections.
	Close() error
}

// Memory is a Store for one process: the default, for a single replica.
type Memory struct {
	// TTL expires sessions idle for longer; zero keeps them.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu       sync.Mutex
	sessions map[string]Record
}

// NewMemory returns an empty in-process store.
func NewMemory(ttl time.Duration) *Memory {
	return &Memory{TTL: ttl, sessions: map[string]Record{}}
}

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Memory) expired(r Record) bool {
	return m.TTL > 0 && m.now().Sub(r.LastSeen) > m.TTL
}

// Load implements Store.
func (m *Memory) Load(_ context.Context, id string) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.sessions[id]
	if !ok || m.expired(r) {
		delete(m.sessions, id)
		return Record{}, ErrNotFound
	}
	return clone(r), nil
}

// Save implements Store.
func (m *Memory) Save(_ context.Context, r Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sessions == nil {
		m.sessions = map[string]Record{}
	}
	m.sessions[r.ID] = clone(r)
	return nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
	return nil
}

// List implements Store.
func (m *Memory) List(_ context.Context) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Record, 0, len(m.sessions))
	for id, r := range m.sessions {
		if m.expired(r) {
			delete(m.sessions, id)
			continue
		}
		out = append(out, clone(r))
	}
	SortNewestFirst(out)
	return out, nil
}

// Close implements Store.
func (m *Memory) Close() error { return nil }

// SortNewestFirst orders records by creation, newest first, ties by id.
func SortNewestFirst(rs []Record) {
	sort.Slice(rs, func(i, j int) bool {
		if !rs[i].Created.Equal(rs[j].Created) {
			return rs[i].Created.After(rs[j].Created)
		}
		return rs[i].ID < rs[j].ID
	})
}

// clone copies the slices and maps so a caller's later edits do not reach
// the store.
func clone(r Record) Record {
	r.Activations = append([]string(nil), r.Activations...)
	if r.Metadata != nil {
		md := make(map[string]string, len(r.Metadata))
		for k, v := range r.Metadata {
			md[k] = v
		}
		r.Metadata = md
	}
	return r
}
