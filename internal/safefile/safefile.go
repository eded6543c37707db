// Package safefile opens files whose names come from outside the router
// (a model's tool arguments, a project directory, files under
// EVOKORE_HOME) and reads them within limits.
//
// Only a regular file on an ordinary filesystem is opened. Devices
// (/dev/zero, /dev/stdin), FIFOs, sockets, directories, and anything on
// the kernel's pseudo filesystems (/proc, /sys and their kin) are refused:
// reading them either never ends, blocks a thread forever, or reads the
// router's own stdio or secrets (/proc/self/fd/1, /proc/self/environ).
// The checks are made on the opened descriptor, so swapping the path
// between check and open gains nothing, and the open itself is
// non-blocking so that a FIFO cannot hang it. A final symlink is followed
// (users' files often are symlinks); what counts is what was opened.
//
// Every refusal, and every failure to open (missing, permission denied),
// is the same ErrUnavailable, so a tool cannot be used to learn whether a
// file it may not read exists.
//
// Readers honour a context and a byte cap, and ScanLines caps the length
// of a line it holds. The package must stay free of tool logic: callers
// word their own errors.
package safefile

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrUnavailable is every reason a path cannot be opened: it does not
// exist, the router may not read it, it is not a regular file, or it lives
// on a pseudo filesystem. One error for all, by design.
var ErrUnavailable = errors.New("no readable regular file at this path")

// TooLargeError is a read past the caller's byte cap.
type TooLargeError struct {
	// Limit is the cap in bytes.
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("file is larger than the %d-byte limit", e.Limit)
}

// Options tune Open.
type Options struct {
	// MaxBytes caps what Reader and ReadAll yield; 0 means no cap.
	MaxBytes int64
	// RefusePrivileged also refuses a file the router can read only by
	// privilege: one that grants no read permission to others unless it
	// belongs to the router's own (non-root) user. A router running as
	// root, or in a group such as shadow, then cannot be used to probe
	// /etc/shadow or another user's private files.
	RefusePrivileged bool
}

// File is an opened regular file.
type File struct {
	f    *os.File
	info fs.FileInfo
	max  int64
}

// pseudoRoots are refused by name as well as by filesystem type, for the
// platforms where the type cannot be read.
var pseudoRoots = []string{"/proc", "/sys", "/dev"}

// Open opens path for reading if it is a regular file the router may read.
// A relative path is taken from the working directory. Any refusal is
// ErrUnavailable.
func Open(path string, opts Options) (*File, error) {
	if path == "" {
		return nil, ErrUnavailable
	}
	clean, err := filepath.Abs(path)
	if err != nil {
		return nil, ErrUnavailable
	}
	for _, root := range pseudoRoots {
		if clean == root || strings.HasPrefix(clean, root+"/") {
			return nil, ErrUnavailable
		}
	}
	// A stat first keeps the open away from devices, whose open alone
	// can act (a watchdog arms, a tape rewinds). The descriptor is
	// checked again below, since the path may change in between.
	if fi, err := os.Stat(clean); err != nil || !fi.Mode().IsRegular() {
		return nil, ErrUnavailable
	}
	f, err := openNonBlocking(clean)
	if err != nil {
		return nil, ErrUnavailable
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || onPseudoFS(f) || (opts.RefusePrivileged && privileged(fi)) {
		f.Close()
		return nil, ErrUnavailable
	}
	return &File{f: f, info: fi, max: opts.MaxBytes}, nil
}

// Info is the opened file's stat.
func (f *File) Info() fs.FileInfo { return f.info }

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Reader reads the file until its end, the byte cap (a *TooLargeError),
// or ctx's end (ctx.Err()).
func (f *File) Reader(ctx context.Context) io.Reader {
	return &capped{ctx: ctx, r: f.f, left: f.max, limit: f.max}
}

// ReadAll reads the whole file within the cap.
func (f *File) ReadAll(ctx context.Context) ([]byte, error) {
	return io.ReadAll(f.Reader(ctx))
}

// ReadFile opens path with opts, reads it whole within the cap and closes
// it.
func ReadFile(ctx context.Context, path string, opts Options) ([]byte, error) {
	f, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadAll(ctx)
}

type capped struct {
	ctx   context.Context
	r     io.Reader
	left  int64 // meaningful when limit > 0
	limit int64
}

func (c *capped) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if c.limit > 0 {
		if c.left <= 0 {
			// One byte more tells a file of exactly the cap from a larger one.
			var b [1]byte
			if n, _ := c.r.Read(b[:]); n == 0 {
				return 0, io.EOF
			}
			return 0, &TooLargeError{Limit: c.limit}
		}
		if int64(len(p)) > c.left {
			p = p[:c.left]
		}
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// ScanLines calls fn with each line of r (without "\n" or "\r\n") and its
// 1-based number, until fn returns false or r ends. A line longer than
// maxLine bytes is cut to its first maxLine bytes and cut is true; the
// rest is read and dropped, so memory stays bounded by maxLine whatever
// the input. line is only valid during the call.
func ScanLines(r io.Reader, maxLine int, fn func(n int, line []byte, cut bool) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for n := 1; ; n++ {
		buf = buf[:0]
		read := false
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			read = read || len(chunk) > 0
			// Keep up to maxLine bytes and a "\r\n"; anything past that
			// only tells that the line is too long.
			if room := maxLine + 2 - len(buf); room > 0 {
				buf = append(buf, chunk[:min(len(chunk), room)]...)
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if !read {
			if err == nil || errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line := bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte{'\n'}), []byte{'\r'})
		cut := len(line) > maxLine
		if cut {
			line = line[:maxLine]
		}
		if !fn(n, line, cut) {
			return nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
