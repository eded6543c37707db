//go:build unix

package safefile_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/evokore/evokore/internal/safefile"
)

func write(t *testing.T, name, text string, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenReadsARegularFile(t *testing.T) {
	p := write(t, "a.txt", "hello\n", 0o644)
	b, err := safefile.ReadFile(context.Background(), p, safefile.Options{})
	if err != nil || string(b) != "hello\n" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	// A final symlink is followed to a regular file.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if b, err := safefile.ReadFile(context.Background(), link, safefile.Options{}); err != nil || string(b) != "hello\n" {
		t.Fatalf("through a symlink: %q, %v", b, err)
	}
}

func TestOpenRefusesEverythingButRegularFilesWithOneError(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	toProc := filepath.Join(dir, "environ")
	if err := os.Symlink("/proc/self/environ", toProc); err != nil {
		t.Fatal(err)
	}
	toProcDir := filepath.Join(dir, "self")
	if err := os.Symlink("/proc/self", toProcDir); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		"/dev/zero", "/dev/null", "/dev/stdin", "/dev/stdout",
		"/proc/self/environ", "/proc/self/status", "/proc/self/fd/0", "/proc/self/fd/1",
		"/sys/kernel/mm/transparent_hugepage/enabled",
		fifo, sock, toProc, filepath.Join(toProcDir, "status"), dir,
		filepath.Join(dir, "missing"), "relative-and-missing.txt", "",
	}
	for _, p := range paths {
		f, err := safefile.Open(p, safefile.Options{})
		if err == nil {
			f.Close()
			t.Errorf("%s: opened", p)
			continue
		}
		if err != safefile.ErrUnavailable {
			t.Errorf("%s: error %q, want the one ErrUnavailable", p, err)
		}
	}
}

func TestRefusePrivileged(t *testing.T) {
	private := write(t, "private", "secret\n", 0o600)
	public := write(t, "public", "open\n", 0o644)
	opts := safefile.Options{RefusePrivileged: true}
	if _, err := safefile.ReadFile(context.Background(), public, opts); err != nil {
		t.Errorf("a world-readable file: %v", err)
	}
	_, err := safefile.ReadFile(context.Background(), private, opts)
	if os.Geteuid() == 0 {
		// Root reads a 0600 file only by privilege.
		if err != safefile.ErrUnavailable {
			t.Errorf("root reading a 0600 file: %v", err)
		}
		if _, err := safefile.ReadFile(context.Background(), "/etc/shadow", opts); err != safefile.ErrUnavailable {
			t.Errorf("/etc/shadow: %v", err)
		}
	} else if err != nil {
		t.Errorf("the router's own 0600 file: %v", err)
	}
	if _, err := safefile.ReadFile(context.Background(), private, safefile.Options{}); err != nil {
		t.Errorf("without the option: %v", err)
	}
}

func TestReaderCapsBytesAndHonoursCancellation(t *testing.T) {
	p := write(t, "ten", "0123456789", 0o644)
	if b, err := safefile.ReadFile(context.Background(), p, safefile.Options{MaxBytes: 10}); err != nil || string(b) != "0123456789" {
		t.Errorf("a file of exactly the cap: %q, %v", b, err)
	}
	_, err := safefile.ReadFile(context.Background(), p, safefile.Options{MaxBytes: 9})
	var tl *safefile.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 9 {
		t.Errorf("over the cap: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := safefile.ReadFile(ctx, p, safefile.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestScanLines(t *testing.T) {
	in := "one\r\ntwo\n\n" + strings.Repeat("x", 12) + "\r\n" + strings.Repeat("y", 10) + "\r\nlast"
	var got []string
	err := safefile.ScanLines(strings.NewReader(in), 10, func(n int, line []byte, cut bool) bool {
		s := string(line)
		if cut {
			s += "…"
		}
		got = append(got, s)
		return true
	})
	want := []string{"one", "two", "", "xxxxxxxxxx…", "yyyyyyyyyy", "last"}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, %v; want %q", got, err, want)
	}
	n := 0
	_ = safefile.ScanLines(strings.NewReader("a\nb\nc\n"), 10, func(int, []byte, bool) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("fn returning false should stop: %d calls", n)
	}
}

// endless yields n bytes without a newline, without holding them.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), e.n)
	for i := range k {
		p[i] = 'z'
	}
	e.n -= k
	return int(k), nil
}

func TestScanLinesHoldsOnlyTheCutLine(t *testing.T) {
	const total = 256 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	lines := 0
	err := safefile.ScanLines(io.MultiReader(&endless{n: total}, strings.NewReader("\nend\n")), 1<<10, func(_ int, line []byte, cut bool) bool {
		lines++
		if lines == 1 && (!cut || len(line) != 1<<10) {
			t.Errorf("first line: %d bytes, cut %v", len(line), cut)
		}
		return true
	})
	runtime.ReadMemStats(&after)
	if err != nil || lines != 2 {
		t.Fatalf("%d lines, %v", lines, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("scanning a %d-byte line allocated %d bytes", total, grew)
	}
}
