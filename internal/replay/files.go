package replay

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/statefile"
)

// Pruning limits of the sessions directory (the original's).
const (
	// MaxAge is how long a replay or evidence file is kept after its last
	// write.
	MaxAge = 30 * 24 * time.Hour
	// MaxFiles is how many replay and evidence files are kept, newest
	// first.
	MaxFiles = 100
)

// prunable reports whether name is a session file Prune may delete.
func prunable(name string) bool {
	return strings.HasSuffix(name, "-replay.jsonl") || strings.HasSuffix(name, "-evidence.jsonl")
}

// Prune deletes the replay and evidence files in dir last written before
// now-maxAge, then all but the newest maxFiles of the rest. Other files
// (manifests, task lists, trust ledgers) are left alone; so are
// directories and symlinks, which no writer creates. It returns how many
// files it removed; a file it cannot remove is skipped.
func Prune(dir string, maxAge time.Duration, maxFiles int, now time.Time) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	type file struct {
		name string
		mod  time.Time
	}
	var keep []file
	removed := 0
	for _, e := range entries {
		if !e.Type().IsRegular() || !prunable(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if maxAge > 0 && now.Sub(info.ModTime()) > maxAge {
			if os.Remove(filepath.Join(dir, e.Name())) == nil {
				removed++
			}
			continue
		}
		keep = append(keep, file{e.Name(), info.ModTime()})
	}
	if maxFiles > 0 && len(keep) > maxFiles {
		sort.Slice(keep, func(i, j int) bool {
			if !keep[i].mod.Equal(keep[j].mod) {
				return keep[i].mod.After(keep[j].mod)
			}
			return keep[i].name < keep[j].name
		})
		for _, f := range keep[maxFiles:] {
			if os.Remove(filepath.Join(dir, f.name)) == nil {
				removed++
			}
		}
	}
	return removed, nil
}

// Rotation limits of logs/hooks.jsonl (the original's); other logs may
// pass their own.
const (
	LogMaxBytes = 5 << 20
	LogKeep     = 3
)

// AppendRotating appends line to the log at path, first rotating it when
// it has reached maxBytes: path.keep is dropped, path.N becomes
// path.N+1, and path becomes path.1. The check, the rotation and the
// append hold an exclusive lock on path.lock, so concurrent writers never
// rotate twice or write into a file being renamed.
func AppendRotating(path string, line []byte, maxBytes int64, keep int) error {
	buf := make([]byte, 0, len(line)+1)
	return AppendRotatingLines(path, append(append(buf, line...), '\n'), maxBytes, keep)
}

// AppendRotatingLines is AppendRotating of lines that end in a newline
// already, in one write: a batch of them (the audit log's) is not copied
// to add one.
func AppendRotatingLines(path string, lines []byte, maxBytes int64, keep int) error {
	// The directory is made only when the lock cannot be opened: it
	// exists for every append but the first, and the stat of a MkdirAll
	// per append was 2% of a proxied call's CPU.
	lf, err := safefile.OpenAppend(path + ".lock")
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		lf, err = safefile.OpenAppend(path + ".lock")
	}
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := statefile.Lock(lf); err != nil {
		return err
	}
	defer statefile.Unlock(lf)
	if info, err := os.Lstat(path); err == nil && maxBytes > 0 && info.Size() >= maxBytes {
		if err := rotate(path, keep); err != nil {
			return err
		}
	}
	// The rotation lock is held: the log itself needs no lock of its own.
	return statefile.WriteHeld(path, lines)
}

// rotate shifts path's generations by one, keeping keep of them.
func rotate(path string, keep int) error {
	if keep < 1 {
		return os.Remove(path)
	}
	_ = os.Remove(fmt.Sprintf("%s.%d", path, keep))
	for i := keep - 1; i >= 1; i-- {
		from := fmt.Sprintf("%s.%d", path, i)
		if _, err := os.Lstat(from); err == nil {
			if err := os.Rename(from, fmt.Sprintf("%s.%d", path, i+1)); err != nil {
				return err
			}
		}
	}
	return os.Rename(path, path+".1")
}
