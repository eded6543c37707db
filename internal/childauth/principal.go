package childauth

import (
	"context"
	"errors"
	"sync"

	"github.com/evokore/evokore/internal/config"
)

// Owner is whose authorization to a child evokore uses: "" is the
// router's own (a shared child, `evokore auth login`), any other value
// one authenticated caller's (OwnerOf), for the instances of a child
// whose scope is subject or session. The tokens, logins, refusals and
// waiters of one owner are kept apart from every other's: a call never
// goes with another caller's token, and never asks another caller.
type Owner = string

// OwnerOf is the owner of a caller's tokens: its tenant and subject; ""
// (the router's own) for a caller with no authenticated subject (stdio,
// HTTP without authentication), who is the router's own user.
func OwnerOf(tenant, subject string) Owner {
	if subject == "" {
		return ""
	}
	return tenant + "\x00" + subject
}

// principal is one owner's authorization to one child (spec as
// configured).
type principal struct {
	spec  config.Server
	owner Owner
}

// key names the principal in the manager's tables: the child's id for
// the router's own, so a shared child keeps the key it always had.
func (p principal) key() string { return keyOf(p.spec.ID, p.owner) }

func keyOf(id string, owner Owner) string {
	if owner == "" {
		return id
	}
	return id + "\x00" + owner
}

// needs is the error of a request that needs p's authorization.
func (p principal) needs(reason string) *NeedsAuthorizationError {
	return &NeedsAuthorizationError{Server: p.spec.ID, Reason: reason, Caller: p.owner != ""}
}

// tokenStore keeps the entries of owners other than the router: files
// under EVOKORE_HOME/oauth on one machine, Redis shared by replicas.
type tokenStore interface {
	load(ctx context.Context, p principal) (*Entry, error)
	save(ctx context.Context, p principal, e *Entry) error
	remove(ctx context.Context, p principal) error
	// lock holds p's entry for a refresh and its write.
	lock(ctx context.Context, p principal) (unlock func(), err error)
}

// subjectStores is where callers' tokens live: the file store until the
// router shares its state (UseSharedTokens), then Redis, or nothing at
// all when the shared store is unavailable (fail closed: never files a
// replica alone would see).
type subjectStores struct {
	mu  sync.Mutex
	cur tokenStore
	err error
}

func (s *subjectStores) get() (tokenStore, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.err
}

// ErrNoSharedTokens is a caller's tokens asked of a router told to share
// its state (EVOKORE_SESSION_STORE=redis) that cannot.
var ErrNoSharedTokens = errors.New("callers' tokens are kept in the shared store, which is unavailable")

// UseSharedTokens keeps callers' tokens in ts from now on (Redis, see
// NewRedisTokens); a nil ts with err refuses them with err. A router
// that shares its state calls it before serving with err, and again
// once the store answers.
func (m *Manager) UseSharedTokens(ts *RedisTokens, err error) {
	m.subjects.mu.Lock()
	defer m.subjects.mu.Unlock()
	if ts != nil {
		m.subjects.cur, m.subjects.err = ts, nil
		return
	}
	if err == nil {
		err = ErrNoSharedTokens
	}
	m.subjects.cur, m.subjects.err = nil, err
}

// Store dispatch: the router's own entries are the file store's, as
// they always were; a caller's are the subject store's.

func (m *Manager) load(p principal) (*Entry, error) {
	if p.owner == "" {
		return m.store.Load(p.spec)
	}
	ts, err := m.subjects.get()
	if err != nil {
		return nil, err
	}
	return ts.load(context.Background(), p)
}

func (m *Manager) save(p principal, e *Entry) error {
	if p.owner == "" {
		return m.store.Save(p.spec, e)
	}
	ts, err := m.subjects.get()
	if err != nil {
		return err
	}
	e.Owner = p.owner
	return ts.save(context.Background(), p, e)
}

func (m *Manager) remove(p principal) error {
	if p.owner == "" {
		return m.store.Remove(p.spec)
	}
	ts, err := m.subjects.get()
	if err != nil {
		return err
	}
	return ts.remove(context.Background(), p)
}

func (m *Manager) lockTokens(p principal) (func(), error) {
	if p.owner == "" {
		return m.store.lock(p.spec)
	}
	ts, err := m.subjects.get()
	if err != nil {
		return nil, err
	}
	return ts.lock(context.Background(), p)
}
