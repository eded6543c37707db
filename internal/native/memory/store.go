package memory

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
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
func (s *Store) with(sessionID string, readOnly bool, fn func(*bolt.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := s.PathFor(sessionID)
	if readOnly {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	} else if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 10 * time.Second, ReadOnly: readOnly})
	if err != nil {
		return err
	}
	defer db.Close()
	if readOnly {
		return db.View(fn)
	}
	return db.Update(fn)
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
