package statefile

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/evokore/evokore/internal/safefile"
)

// Files appended to many times a second (the audit log, a session's
// replay) stay open between appends: opening, locking and closing a file
// for every line was most of the syscalls a proxied call cost with the
// records on. Before each append the path is looked up again, so a file
// that was rotated, replaced or removed (by another router, a CLI, the
// replay's garbage collector) is reopened at its path rather than written
// into the old inode.

// maxHeld bounds the files kept open; the least recently used is closed.
const maxHeld = 32

type heldFile struct {
	mu   sync.Mutex // one append at a time in this process (flock is per open file)
	f    *os.File
	info os.FileInfo
	used uint64
}

var held = struct {
	sync.Mutex
	files map[string]*heldFile
	clock uint64
}{files: map[string]*heldFile{}}

// withHeld runs fn with path open for appending (created when missing)
// and its in-process lock held.
func withHeld(path string, fn func(f *os.File) error) error {
	if runtime.GOOS == "windows" {
		// An open file there cannot be renamed or removed: the log's
		// rotation and the replay's collection need it closed.
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		return appendOnce(path, fn)
	}
	now, statErr := os.Lstat(path)
	held.Lock()
	hf := held.files[path]
	if hf != nil && (statErr != nil || !os.SameFile(now, hf.info)) {
		delete(held.files, path)
		defer closeHeld(hf)
		hf = nil
	}
	held.clock++
	if hf != nil {
		hf.used = held.clock
		held.Unlock()
		hf.mu.Lock()
		defer hf.mu.Unlock()
		if hf.f == nil { // closed by eviction between the lookup and here
			return appendOnce(path, fn)
		}
		return fn(hf.f)
	}
	held.Unlock()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := safefile.OpenAppend(path)
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return err
	}
	hf = &heldFile{f: f, info: info}
	hf.mu.Lock()
	defer hf.mu.Unlock()
	held.Lock()
	if old := held.files[path]; old != nil {
		defer closeHeld(old)
	}
	held.clock++
	hf.used = held.clock
	held.files[path] = hf
	if len(held.files) > maxHeld {
		var oldest string
		for p, h := range held.files {
			if oldest == "" || h.used < held.files[oldest].used {
				oldest = p
			}
		}
		victim := held.files[oldest]
		delete(held.files, oldest)
		if victim != hf {
			defer closeHeld(victim)
		}
	}
	held.Unlock()
	return fn(f)
}

// appendOnce opens, uses and closes path.
func appendOnce(path string, fn func(f *os.File) error) error {
	f, err := safefile.OpenAppend(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return fn(f)
}

func closeHeld(hf *heldFile) {
	hf.mu.Lock()
	defer hf.mu.Unlock()
	if hf.f != nil {
		_ = hf.f.Close()
		hf.f = nil
	}
}

// CloseHeld closes every file kept open for appending (at shutdown, and
// in tests that remove a directory).
func CloseHeld() {
	held.Lock()
	files := held.files
	held.files = map[string]*heldFile{}
	held.Unlock()
	for _, hf := range files {
		closeHeld(hf)
	}
}
