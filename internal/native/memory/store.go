package memory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/logging"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/evokore/evokore/internal/safefile"
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

	// Log receives the report of a corrupt database set aside and of a
	// JSON store that could not be imported; nil discards it.
	Log *slog.Logger

	// mu serialises this process's operations, so that a file is never
	// set aside while another call of this router has it open. Other
	// routers are kept in step by SQLite's locks.
	mu sync.Mutex
}

// NewStore keeps memories in dir.
func NewStore(dir string) *Store { return &Store{dir: dir, Now: time.Now} }

// ID is an entry's id.
func ID(sessionID, key string) string {
	sum := sha256.Sum256([]byte(sessionID + "::" + key))
	return hex.EncodeToString(sum[:])
}

// schema is EVOKORE-MCP's, statement for statement, so that its files
// and ours are one format.
const schema = `
CREATE TABLE IF NOT EXISTS memories (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  key TEXT NOT NULL,
  kind TEXT NOT NULL,
  value TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER,
  tags TEXT DEFAULT '[]',
  UNIQUE(session_id, key)
);
CREATE INDEX IF NOT EXISTS idx_session ON memories(session_id);
CREATE INDEX IF NOT EXISTS idx_expires ON memories(expires_at);`

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
	tagText, err := json.Marshal(tags)
	if err != nil {
		return Entry{}, err
	}
	err = s.with(sessionID, false, func(tx *sql.Tx) error {
		row := tx.QueryRow(`INSERT INTO memories (id, session_id, key, kind, value, created_at, updated_at, expires_at, tags)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(session_id, key) DO UPDATE SET id = excluded.id, kind = excluded.kind, value = excluded.value,
  updated_at = excluded.updated_at, expires_at = excluded.expires_at, tags = excluded.tags
RETURNING created_at`, e.ID, sessionID, key, kind, string(e.Value), ms, ms, e.ExpiresAt, string(tagText))
		if err := row.Scan(&e.CreatedAt); err != nil {
			return err
		}
		_, err := tx.Exec(`DELETE FROM memories WHERE session_id = ? AND expires_at IS NOT NULL AND expires_at <= ?`, sessionID, ms)
		return err
	})
	return e, err
}

// Find returns the live entries matching q, newest update first.
func (s *Store) Find(sessionID string, q Query) ([]Entry, error) {
	now := s.Now().UnixMilli()
	text := strings.ToLower(q.Text)
	var out []Entry
	err := s.with(sessionID, true, func(tx *sql.Tx) error {
		query := `SELECT id, session_id, key, kind, value, created_at, updated_at, expires_at, tags FROM memories
WHERE session_id = ? AND (expires_at IS NULL OR expires_at > ?)`
		args := []any{sessionID, now}
		if q.Kind != "" {
			query += ` AND kind = ?`
			args = append(args, q.Kind)
		}
		rows, err := tx.Query(query+` ORDER BY updated_at DESC, key`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				e           Entry
				value       string
				tags        sql.NullString
				expiresAt   sql.NullInt64
				id, session sql.NullString
			)
			if err := rows.Scan(&id, &session, &e.Key, &e.Kind, &value, &e.CreatedAt, &e.UpdatedAt, &expiresAt, &tags); err != nil {
				return err
			}
			e.ID, e.SessionID = id.String, session.String
			e.Value = decodeValue(value)
			e.Tags = decodeTags(tags.String)
			if expiresAt.Valid {
				e.ExpiresAt = &expiresAt.Int64
			}
			if !matches(&e, q.Tags, text) {
				continue
			}
			out = append(out, e)
			if q.Limit > 0 && len(out) == q.Limit {
				break
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func matches(e *Entry, tags []string, text string) bool {
	for _, t := range tags {
		if !slices.Contains(e.Tags, t) {
			return false
		}
	}
	return text == "" || strings.Contains(strings.ToLower(e.Key), text) ||
		strings.Contains(strings.ToLower(string(e.Value)), text)
}

// decodeValue is a stored value as JSON. The original wrote
// JSON.stringify(value); a row some other writer left as plain text is
// that text as a JSON string, as the original read it.
func decodeValue(s string) json.RawMessage {
	var b bytes.Buffer
	if json.Valid([]byte(s)) && json.Compact(&b, []byte(s)) == nil {
		return b.Bytes()
	}
	quoted, _ := json.Marshal(s)
	return quoted
}

// decodeTags reads the tags column: a JSON array, its items as strings;
// anything else is no tags.
func decodeTags(s string) []string {
	var raw []any
	if json.Unmarshal([]byte(s), &raw) != nil {
		return []string{}
	}
	out := make([]string, 0, len(raw))
	for _, v := range raw {
		if str, ok := v.(string); ok {
			out = append(out, str)
		} else {
			b, _ := json.Marshal(v)
			out = append(out, string(b))
		}
	}
	return out
}

// busyTimeout is how long a call waits for another router's write.
const busyTimeout = 10 * time.Second

// dsn opens path in WAL mode (readers never wait for a writer) with a
// busy timeout, so routers sharing EVOKORE_HOME take turns.
func dsn(path string) string {
	p := filepath.ToSlash(path)
	if filepath.VolumeName(path) != "" {
		p = "/" + p // file:///C:/..., as SQLite reads a Windows path
	}
	u := url.URL{Scheme: "file", Path: p}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	// In WAL mode NORMAL never corrupts the file; a power cut may lose
	// the last write, and a write costs no fsync.
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	u.RawQuery = q.Encode()
	return u.String()
}

// with runs fn in one transaction on the session's database, opened for
// this call only: a file the user moves or deletes between calls is
// simply gone, and a corrupt one is never held open. A read of a session
// that has neither a database nor a JSON store finds no entries and
// creates nothing.
//
// A corrupt file must cost one call, not the router: SQLite's errors
// about a damaged or foreign file, and any panic inside the driver, set
// the file aside and fail the call with a *CorruptError; the next call
// starts afresh.
func (s *Store) with(sessionID string, readOnly bool, fn func(*sql.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := s.PathFor(sessionID)
	legacy := strings.TrimSuffix(path, ".db") + ".json"
	fi, err := os.Lstat(path)
	fresh := false
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, jerr := os.Lstat(legacy); readOnly && jerr != nil {
			return nil
		}
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return err
		}
		fresh = true
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		// A FIFO, device or symlink in its place: SQLite would block on
		// it or write through it.
		return s.setAside(path, fmt.Sprintf("not a regular file (%s)", fi.Mode().Type()))
	}
	// Two routers opening one fresh file can meet SQLITE_BUSY where the
	// busy handler does not apply (switching the journal to WAL): such a
	// transaction is retried whole, within the busy timeout.
	for start, wait := time.Now(), 5*time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err = s.attempt(path, legacy, fresh, fn)
		if !isBusy(err) || time.Since(start) > busyTimeout {
			break
		}
		time.Sleep(wait)
		fresh = false
		if _, serr := os.Lstat(path); errors.Is(serr, fs.ErrNotExist) {
			fresh = true
		}
	}
	var p *panicked
	switch {
	case errors.As(err, &p):
		return s.setAside(path, p.Error())
	case isCorrupt(err):
		return s.setAside(path, err.Error())
	}
	return err
}

// isBusy reports SQLite's "database is locked".
func isBusy(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "database is locked"))
}

// attempt runs fn in one transaction on path.
func (s *Store) attempt(path, legacy string, fresh bool, fn func(*sql.Tx) error) error {
	return protect(func() error {
		db, err := sql.Open("sqlite", dsn(path))
		if err != nil {
			return err
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		if fresh {
			// SQLite creates the file 0644; memories are the user's.
			if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				f.Close()
			}
		}
		tx, err := db.BeginTx(context.Background(), nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.Exec(schema); err != nil {
			return err
		}
		if fresh {
			s.importJSON(tx, legacy)
		}
		if err := fn(tx); err != nil {
			return err
		}
		return tx.Commit()
	})
}

// importJSON copies the entries of EVOKORE-MCP's JSON store (an array
// of entries, written when node:sqlite was missing) into a database
// just created beside it. The JSON file is left as it was. Entries that
// are not entries are skipped; an unreadable file is reported and
// imports nothing.
func (s *Store) importJSON(tx *sql.Tx, file string) {
	data, err := safefile.Load(file, safefile.MaxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var items []json.RawMessage
	if err == nil {
		err = json.Unmarshal(data, &items)
	}
	if err != nil {
		s.log().Info("[EVOKORE] Cannot import a memory store", "file", file, "err", err)
		return
	}
	n := 0
	for _, raw := range items {
		var e struct {
			ID        string          `json:"id"`
			SessionID string          `json:"session_id"`
			Key       string          `json:"key"`
			Kind      string          `json:"kind"`
			Value     json.RawMessage `json:"value"`
			Tags      json.RawMessage `json:"tags"`
			CreatedAt int64           `json:"created_at"`
			UpdatedAt int64           `json:"updated_at"`
			ExpiresAt *int64          `json:"expires_at"`
		}
		if json.Unmarshal(raw, &e) != nil || e.SessionID == "" || e.Key == "" || !slices.Contains(Kinds, e.Kind) {
			continue
		}
		if e.Value == nil {
			e.Value = json.RawMessage("null")
		}
		var value bytes.Buffer
		if json.Compact(&value, e.Value) != nil {
			continue
		}
		tags, _ := json.Marshal(decodeTags(string(e.Tags)))
		if e.UpdatedAt == 0 {
			e.UpdatedAt = e.CreatedAt
		}
		res, err := tx.Exec(`INSERT OR IGNORE INTO memories (id, session_id, key, kind, value, created_at, updated_at, expires_at, tags)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, ID(e.SessionID, e.Key), e.SessionID, e.Key, e.Kind, value.String(), e.CreatedAt, e.UpdatedAt, e.ExpiresAt, string(tags))
		if err != nil {
			s.log().Info("[EVOKORE] Memory entry not imported", "file", file, "key", e.Key, "err", err)
			continue
		}
		if k, _ := res.RowsAffected(); k > 0 {
			n++
		}
	}
	s.log().Info("[EVOKORE] Imported memory entries; the file is kept", "entries", n, "file", file)
}

// CorruptError is a session's database found corrupt and set aside.
type CorruptError struct {
	// Path is the corrupt file's new name.
	Path string
	// Reason is what was wrong, as SQLite or the file system said it.
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("the memory database was corrupt (%s); it was moved to %s and the next call starts a fresh one", e.Reason, e.Path)
}

// setAside renames a corrupt database, and its WAL and shared-memory
// files, out of the way and logs it. A WAL left behind would be replayed
// into the fresh database.
func (s *Store) setAside(path, reason string) error {
	aside := fmt.Sprintf("%s.corrupt-%s", path, s.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := os.Rename(path, aside); err != nil {
		s.log().Info("[EVOKORE] Memory database is corrupt and could not be moved aside", "path", path, "reason", reason, "err", err)
		return fmt.Errorf("the memory database is corrupt (%s) and could not be moved aside: %v", reason, err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Rename(path+suffix, aside+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			_ = os.Remove(path + suffix)
		}
	}
	s.log().Info("[EVOKORE] Memory database is corrupt; moved it aside and starting a fresh one", "path", path, "reason", reason, "aside", aside)
	return &CorruptError{Path: aside, Reason: reason}
}

// panicked is a panic recovered from the database driver.
type panicked struct{ value any }

func (p *panicked) Error() string { return fmt.Sprintf("the database driver panicked: %v", p.value) }

// protect runs fn, turning a panic, or a memory fault, into a *panicked
// error.
func protect(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			err = &panicked{value: v}
		}
	}()
	return fn()
}

// isCorrupt tells SQLite's errors about a damaged or foreign file from
// the ones about a busy or unwritable one, which must never cost the
// user their memory.
func isCorrupt(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// PathFor is the database file of a session. It is the original's name
// (the id with every character outside [A-Za-z0-9._-] made "_"), so its
// files are found where it left them; ids that share a name share the
// file, and rows carry their session id. A name too long for a file
// system is cut and given a hash of the id.
func (s *Store) PathFor(sessionID string) string {
	safe := []byte(sessionID)
	for i, c := range safe {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			safe[i] = '_'
		}
	}
	name := string(safe)
	if len(name) > 100 || strings.Trim(name, ".") == "" {
		sum := sha256.Sum256([]byte(sessionID))
		name = name[:min(len(name), 64)] + "-" + hex.EncodeToString(sum[:4])
	}
	return filepath.Join(s.dir, name+".db")
}

// log is Log, or a logger that discards when none was set.
func (s *Store) log() *slog.Logger {
	if s.Log == nil {
		return logging.Discard()
	}
	return s.Log
}
