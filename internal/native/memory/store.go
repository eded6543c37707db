package memory

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Kinds, in the order error messages list them.
var Kinds = []string{"knowledge", "context", "task", "result", "error", "metric", "decision", "working"}

// DefaultTTL is each kind's lifetime; zero means the entry never expires.
var DefaultTTL = map[string]time.Duration{
	"knowledge": 0,
	"context":   0,
	"decision":  0,
	"working":   time.Hour,
	"task":      4 * time.Hour,
	"result":    24 * time.Hour,
	"error":     7 * 24 * time.Hour,
	"metric":    30 * 24 * time.Hour,
}

// Entry is one memory. Times are Unix milliseconds.
type Entry struct {
	ID        string          `json:"id"`
	SessionID string          `json:"session_id"`
	Key       string          `json:"key"`
	Kind      string          `json:"kind"`
	Value     json.RawMessage `json:"value"`
	Tags      []string        `json:"tags"`
	CreatedAt int64           `json:"created_at"`
	UpdatedAt int64           `json:"updated_at"`
	ExpiresAt *int64          `json:"expires_at"`
}

func (e *Entry) expired(now int64) bool { return e.ExpiresAt != nil && *e.ExpiresAt <= now }

// Query selects a session's entries.
type Query struct {
	// Text matches a substring of the key or of the value's JSON,
	// ignoring case.
	Text string
	Kind string
	// Tags must all be present.
	Tags  []string
	Limit int
}

// Store is the memory directory.
type Store struct {
	dir string
	// Now is the clock; tests may replace it before use.
	Now func() time.Time

	// Log receives the report of a corrupt database set aside; nil
	// discards it.
	Log io.Writer

	// mu serialises this process's opens: bbolt's file lock would make a
	// second open in the same process wait for its timeout.
	mu sync.Mutex
}

// NewStore keeps memories in dir.
func NewStore(dir string) *Store { return &Store{dir: dir, Now: time.Now} }

// ID is an entry's id.
func ID(sessionID, key string) string {
	sum := sha256.Sum256([]byte(sessionID + "::" + key))
	return hex.EncodeToString(sum[:])
}

// Put stores value under (session, key), updating an existing entry.
// ttl nil takes the kind's default; a ttl of zero or less never expires.
func (s *Store) Put(sessionID, key, kind string, value json.RawMessage, tags []string, ttl *time.Duration) (Entry, error) {
	now := s.Now()
	ms := now.UnixMilli()
	life := DefaultTTL[kind]
	if ttl != nil {
		life = *ttl
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, value); err != nil {
		return Entry{}, err
	}
	if tags == nil {
		tags = []string{}
	}
	e := Entry{ID: ID(sessionID, key), SessionID: sessionID, Key: key, Kind: kind,
		Value: compact.Bytes(), Tags: tags, CreatedAt: ms, UpdatedAt: ms}
	if life > 0 {
		exp := now.Add(life).UnixMilli()
		e.ExpiresAt = &exp
	}
	err := s.with(sessionID, false, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(sessionID))
		if err != nil {
			return err
		}
		if old := b.Get([]byte(key)); old != nil {
			var prev Entry
			if json.Unmarshal(old, &prev) == nil && prev.CreatedAt > 0 {
				e.CreatedAt = prev.CreatedAt
			}
		}
		data, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if err := b.Put([]byte(key), data); err != nil {
			return err
		}
		return purge(b, ms)
	})
	return e, err
}

// Find returns the live entries matching q, newest update first.
func (s *Store) Find(sessionID string, q Query) ([]Entry, error) {
	now := s.Now().UnixMilli()
	text := strings.ToLower(q.Text)
	var out []Entry
	err := s.with(sessionID, true, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(sessionID))
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, v []byte) error {
			var e Entry
			if json.Unmarshal(v, &e) != nil || e.expired(now) {
				return nil
			}
			if q.Kind != "" && e.Kind != q.Kind {
				return nil
			}
			for _, t := range q.Tags {
				if !slices.Contains(e.Tags, t) {
					return nil
				}
			}
			if text != "" && !strings.Contains(strings.ToLower(e.Key), text) &&
				!strings.Contains(strings.ToLower(string(e.Value)), text) {
				return nil
			}
			out = append(out, e)
			return nil
		})
	})
	slices.SortStableFunc(out, func(a, b Entry) int {
		if a.UpdatedAt != b.UpdatedAt {
			if a.UpdatedAt > b.UpdatedAt {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, err
}

// purge drops the bucket's expired entries.
func purge(b *bolt.Bucket, now int64) error {
	var dead [][]byte
	err := b.ForEach(func(k, v []byte) error {
		var e Entry
		if json.Unmarshal(v, &e) == nil && e.expired(now) {
			dead = append(dead, slices.Clone(k))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range dead {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// with opens the session's database for one transaction. A read of a
// session that never stored anything finds no file and no entries.
//
// A corrupt file must cost one call, not the router: bbolt panics (or
// faults on its memory map) on some corruptions, so the open and the
// transaction run under protect. A file found corrupt is set aside and
// the call fails with a *CorruptError; the next call starts afresh.
func (s *Store) with(sessionID string, readOnly bool, fn func(*bolt.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := s.PathFor(sessionID)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if readOnly {
			return nil
		}
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return err
		}
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		// A FIFO, device or symlink in its place: bbolt would block on
		// it or write through it.
		return s.setAside(path, fmt.Sprintf("not a regular file (%s)", fi.Mode().Type()))
	}
	err = protect(func() error {
		db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 10 * time.Second, ReadOnly: readOnly})
		if err != nil {
			return err
		}
		defer db.Close()
		if readOnly {
			return db.View(fn)
		}
		return db.Update(fn)
	})
	var p *panicked
	switch {
	case errors.As(err, &p):
		return s.setAside(path, p.Error())
	case isCorrupt(err):
		return s.setAside(path, err.Error())
	}
	return err
}

// CorruptError is a session's database found corrupt and set aside.
type CorruptError struct {
	// Path is the corrupt file's new name.
	Path string
	// Reason is what was wrong, as bbolt or the file system said it.
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("the memory database was corrupt (%s); it was moved to %s and the next call starts a fresh one", e.Reason, e.Path)
}

// setAside renames a corrupt database out of the way and logs it.
func (s *Store) setAside(path, reason string) error {
	aside := fmt.Sprintf("%s.corrupt-%s", path, s.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := os.Rename(path, aside); err != nil {
		s.logf("[EVOKORE] Memory database %s is corrupt (%s) and could not be moved aside: %v", path, reason, err)
		return fmt.Errorf("the memory database is corrupt (%s) and could not be moved aside: %v", reason, err)
	}
	s.logf("[EVOKORE] Memory database %s is corrupt (%s); moved it to %s and starting a fresh one", path, reason, aside)
	return &CorruptError{Path: aside, Reason: reason}
}

func (s *Store) logf(format string, args ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, format+"\n", args...)
	}
}

// panicked is a panic recovered from bbolt.
type panicked struct{ value any }

func (p *panicked) Error() string { return fmt.Sprintf("bbolt panicked: %v", p.value) }

// protect runs fn, turning a panic, or a memory fault on bbolt's mmap of
// a truncated file, into a *panicked error.
func protect(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			err = &panicked{value: v}
		}
	}()
	return fn()
}

// isCorrupt tells bbolt's errors about a damaged file from the ones about
// a busy or unwritable one, which must never cost the user their memory.
func isCorrupt(err error) bool {
	if err == nil {
		return false
	}
	for _, e := range []error{bolterrors.ErrInvalid, bolterrors.ErrChecksum, bolterrors.ErrVersionMismatch, bolterrors.ErrInvalidMapping} {
		if errors.Is(err, e) {
			return true
		}
	}
	return strings.HasPrefix(err.Error(), "file size too small")
}

// PathFor is the database file of a session: the id itself when it is a
// plain file name, else a sanitised prefix and a hash, so that distinct
// ids never share a file.
func (s *Store) PathFor(sessionID string) string {
	safe := []byte(sessionID)
	changed := false
	for i, c := range safe {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			safe[i] = '_'
			changed = true
		}
	}
	name := string(safe)
	if changed || len(name) > 100 || name == "" || strings.Trim(name, ".") == "" {
		sum := sha256.Sum256([]byte(sessionID))
		name = name[:min(len(name), 64)] + "-" + hex.EncodeToString(sum[:4])
	}
	return filepath.Join(s.dir, name+".db")
}
