//go:build unix

package safefile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/evokore/evokore/internal/safefile"
)

// The files evokore reads for itself are read only when regular and
// within the cap, and the refusal says which and why; a missing file stays
// recognisable as missing.
func TestLoadRefusesWithTheFileAndTheReason(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	environ := filepath.Join(dir, "environ")
	if err := os.Symlink("/proc/self/environ", environ); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 11), 0o600); err != nil {
		t.Fatal(err)
	}
	exact := filepath.Join(dir, "exact")
	if err := os.WriteFile(exact, make([]byte, 10), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		zero: zero + ": not a regular file", fifo: fifo + ": not a regular file", dir: dir + ": not a regular file",
		environ: environ + ": not a regular file", big: big + ": exceeds 10 bytes",
	} {
		b, err := safefile.Load(path, 10)
		if err == nil || err.Error() != want {
			t.Errorf("Load(%s) = %d bytes, %v; want %q", path, len(b), err, want)
		}
		var fe *safefile.FileError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %T is not a *FileError", path, err)
		}
	}
	if b, err := safefile.Load(exact, 10); err != nil || len(b) != 10 {
		t.Errorf("a file of exactly the cap: %d bytes, %v", len(b), err)
	}
	if _, err := safefile.Load(filepath.Join(dir, "missing"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	fsys := os.DirFS(dir)
	for name, want := range map[string]error{"zero.json": safefile.ErrNotRegular, "fifo.yml": safefile.ErrNotRegular,
		"environ": safefile.ErrNotRegular, "big": safefile.ErrTooLarge, "missing": fs.ErrNotExist} {
		if _, err := safefile.LoadFS(fsys, name, "SKILLS/"+name, 10); !errors.Is(err, want) {
			t.Errorf("LoadFS(%s) = %v; want %v", name, err, want)
		}
	}
}

// A file evokore appends to is opened only when regular (or missing, then
// created 0600): a FIFO is refused at once rather than waited on.
func TestOpenAppendRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "audit.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	null := filepath.Join(dir, "null")
	if err := os.Symlink("/dev/null", null); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, null, dir} {
		f, err := safefile.OpenAppend(path)
		if !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("OpenAppend(%s) = %v", path, err)
		}
		if f != nil {
			f.Close()
		}
	}
	log := filepath.Join(dir, "log")
	for range 2 {
		f, err := safefile.OpenAppend(log)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("line\n"); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if b, err := os.ReadFile(log); err != nil || string(b) != "line\nline\n" {
		t.Errorf("appended: %q, %v", b, err)
	}
	if fi, err := os.Stat(log); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("created %v, %v", fi.Mode(), err)
	}
}
