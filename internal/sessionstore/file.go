package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/statefile"
)

// File keeps one JSON file per session, <Dir>/<id>.json, in EVOKORE-MCP's
// shape: sessions survive a restart of the one replica that owns the
// directory. Files are replaced atomically, so a reader never sees half
// a record; a file that does not parse is a session not found, never a
// crash.
type File struct {
	// Dir is EVOKORE_HOME/session-store.
	Dir string
	// TTL expires sessions idle for longer; zero keeps them.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// NewFile returns a store over dir.
func NewFile(dir string, ttl time.Duration) *File { return &File{Dir: dir, TTL: ttl} }

func (f *File) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *File) path(id string) string { return filepath.Join(f.Dir, id+".json") }

func (f *File) expired(r Record) bool { return f.TTL > 0 && f.now().Sub(r.LastSeen) > f.TTL }

// Load implements Store.
func (f *File) Load(ctx context.Context, id string) (Record, error) {
	if !ValidID(id) {
		return Record{}, ErrNotFound
	}
	data, err := safefile.ReadFile(ctx, f.path(id), safefile.Options{MaxBytes: MaxRecordBytes})
	if err != nil {
		return Record{}, ErrNotFound
	}
	r, err := decode(id, data)
	if err != nil {
		return Record{}, err
	}
	if f.expired(r) {
		_ = os.Remove(f.path(id))
		return Record{}, ErrNotFound
	}
	return r, nil
}

// Save implements Store.
func (f *File) Save(_ context.Context, r Record) error {
	if !ValidID(r.ID) {
		return fmt.Errorf("session id %q cannot be stored", r.ID)
	}
	data, err := encode(r)
	if err != nil {
		return err
	}
	return statefile.WriteAtomic(f.path(r.ID), append(data, '\n'), 0o600)
}

// Delete implements Store.
func (f *File) Delete(_ context.Context, id string) error {
	if !ValidID(id) {
		return nil
	}
	if err := os.Remove(f.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// List implements Store. Files that do not hold a live session are
// skipped; expired ones are removed.
func (f *File) List(ctx context.Context) ([]Record, error) {
	entries, err := os.ReadDir(f.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []Record{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []Record{}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || !ValidID(id) {
			continue
		}
		if r, err := f.Load(ctx, id); err == nil {
			out = append(out, r)
		}
	}
	SortNewestFirst(out)
	return out, nil
}

// Close implements Store.
func (f *File) Close() error { return nil }
