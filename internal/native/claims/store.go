package claims

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/statefile"
)

// DefaultTTL is how long a claim lasts when the caller names no TTL.
const DefaultTTL = 30 * time.Second

// isoMillis is JavaScript's Date.toISOString layout, which EVOKORE-MCP
// wrote and parses.
const isoMillis = "2006-01-02T15:04:05.000Z"

// Claim is one lock file's content.
type Claim struct {
	Resource  string `json:"resource"`
	AgentID   string `json:"agentId"`
	PID       int    `json:"pid"`
	Acquired  string `json:"acquired"`
	TTLMs     int64  `json:"ttlMs"`
	ExpiresAt string `json:"expiresAt"`
}

// Status is a claim with what makes it stale.
type Status struct {
	Claim
	Expired     bool `json:"expired"`
	ProcessDead bool `json:"processDead"`
}

// HeldError reports a live claim held by someone else.
type HeldError struct{ Holder Claim }

func (e *HeldError) Error() string {
	return fmt.Sprintf("Resource '%s' is already claimed by agent '%s' (pid %d, expires %s)",
		e.Holder.Resource, e.Holder.AgentID, e.Holder.PID, e.Holder.ExpiresAt)
}

// Store is the claims directory.
type Store struct {
	dir string
	// Now is the clock; tests may replace it before use.
	Now func() time.Time
	// Alive probes a claim's process; tests may replace it before use.
	Alive func(pid int) bool

	mu sync.Mutex
}

// NewStore returns the store of claims kept in dir.
func NewStore(dir string) *Store {
	return &Store{dir: dir, Now: time.Now, Alive: procgroup.Alive}
}

// Dir is where the lock files live.
func (s *Store) Dir() string { return s.dir }

// PathFor is the lock file of a resource.
func (s *Store) PathFor(resource string) string {
	sum := sha1.Sum([]byte(resource))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:])+".lock")
}

// Acquire takes resource for agentID, recording pid as the process whose
// death makes the claim stale. A stale claim in the way is removed first;
// a live one held by anyone (the same agent included) is a *HeldError.
func (s *Store) Acquire(resource, agentID string, ttl time.Duration, pid int) (Claim, error) {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	var claim Claim
	err := s.locked(func() error {
		path := s.PathFor(resource)
		for attempt := 0; attempt < 2; attempt++ {
			now := s.Now().UTC()
			claim = Claim{
				Resource:  resource,
				AgentID:   agentID,
				PID:       pid,
				Acquired:  now.Format(isoMillis),
				TTLMs:     ttl.Milliseconds(),
				ExpiresAt: now.Add(ttl).Format(isoMillis),
			}
			err := s.create(path, claim)
			if err == nil {
				return nil
			}
			if !errors.Is(err, fs.ErrExist) {
				return err
			}
			existing, ok := readClaim(path)
			if ok && !s.expired(existing) && s.Alive(existing.PID) {
				return &HeldError{Holder: existing}
			}
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return &ContendedError{Resource: resource}
	})
	return claim, err
}

// Release removes the claim on resource when agentID holds it, or when it
// has expired. It reports whether a claim was removed.
func (s *Store) Release(resource, agentID string) (bool, error) {
	released := false
	err := s.locked(func() error {
		path := s.PathFor(resource)
		existing, ok := readClaim(path)
		if !ok || existing.Resource != resource {
			return nil
		}
		if existing.AgentID != agentID && !s.expired(existing) {
			return nil
		}
		err := os.Remove(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		released = err == nil
		return err
	})
	return released, err
}

// Renew extends agentID's claim on resource to ttl from now. It fails
// when the claim is gone or someone else holds it.
func (s *Store) Renew(resource, agentID string, ttl time.Duration) (Claim, error) {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	var c Claim
	err := s.locked(func() error {
		path := s.PathFor(resource)
		existing, ok := readClaim(path)
		if !ok || existing.Resource != resource || existing.AgentID != agentID {
			return fmt.Errorf("agent '%s' holds no claim on '%s'", agentID, resource)
		}
		c = existing
		c.TTLMs = ttl.Milliseconds()
		c.ExpiresAt = s.Now().UTC().Add(ttl).Format(isoMillis)
		data, err := json.Marshal(c)
		if err != nil {
			return err
		}
		return statefile.WriteAtomic(path, data, 0o600)
	})
	return c, err
}

// List returns every readable claim with its staleness, oldest first.
// Corrupt files are left to Sweep.
func (s *Store) List() ([]Status, error) {
	var out []Status
	err := s.locked(func() error {
		paths, err := s.lockFiles()
		if err != nil {
			return err
		}
		for _, p := range paths {
			c, ok := readClaim(p)
			if !ok {
				continue
			}
			out = append(out, Status{Claim: c, Expired: s.expired(c), ProcessDead: !s.Alive(c.PID)})
		}
		return nil
	})
	slices.SortStableFunc(out, func(a, b Status) int {
		if c := strings.Compare(a.Acquired, b.Acquired); c != 0 {
			return c
		}
		return strings.Compare(a.Resource, b.Resource)
	})
	return out, err
}

// Sweep removes expired, orphaned and corrupt claims and counts what it
// removed and what is left.
func (s *Store) Sweep() (swept, alive int, err error) {
	err = s.locked(func() error {
		paths, err := s.lockFiles()
		if err != nil {
			return err
		}
		for _, p := range paths {
			c, ok := readClaim(p)
			if ok && !s.expired(c) && s.Alive(c.PID) {
				alive++
				continue
			}
			if err := os.Remove(p); err == nil || errors.Is(err, fs.ErrNotExist) {
				swept++
			}
		}
		return nil
	})
	return swept, alive, err
}

func (s *Store) expired(c Claim) bool {
	t, err := time.Parse(time.RFC3339Nano, c.ExpiresAt)
	return err != nil || t.Before(s.Now())
}

// locked runs fn holding the process mutex and the directory's advisory
// lock, creating the directory first.
func (s *Store) locked(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(s.dir, ".mutex"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return err
	}
	defer unlockFile(f)
	return fn()
}

// create writes the claim aside and links it into place: the lock file
// appears complete, and only if no claim holds the name.
func (s *Store) create(path string, c Claim) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	err = os.Link(tmp.Name(), path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	// A file system without hard links: an exclusive create, which the
	// directory lock keeps from being read half-written by us.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

func (s *Store) lockFiles() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".lock") {
			out = append(out, filepath.Join(s.dir, e.Name()))
		}
	}
	return out, nil
}

// maxClaimBytes bounds a lock file; a claim is a few hundred bytes.
const maxClaimBytes = 64 << 10

// readClaim parses a lock file; ok is false when it is missing, is not a
// regular file (anything may sit under EVOKORE_HOME), or does not hold a
// whole claim.
func readClaim(path string) (Claim, bool) {
	data, err := safefile.ReadFile(context.Background(), path, safefile.Options{MaxBytes: maxClaimBytes})
	if err != nil {
		return Claim{}, false
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(data, &raw) != nil {
		return Claim{}, false
	}
	for _, k := range []string{"resource", "agentId", "pid", "acquired", "ttlMs", "expiresAt"} {
		if _, ok := raw[k]; !ok {
			return Claim{}, false
		}
	}
	var c Claim
	if json.Unmarshal(data, &c) != nil {
		return Claim{}, false
	}
	return c, true
}
