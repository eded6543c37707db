package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Caps of the files evokore reads for itself (Load, LoadFS, OpenOwn).
// They are far above any real file: they exist so that a file that never
// ends (/dev/zero behind a symlink) or a runaway one cannot grow the
// router.
const (
	// MaxConfigBytes caps configuration: mcp.config.json, permissions.yml,
	// voices.json, .env files, plugin manifests, skills, certificates.
	MaxConfigBytes = 4 << 20
	// MaxStateBytes caps state under EVOKORE_HOME: pins, trust records,
	// approvals, decisions, session records, caches.
	MaxStateBytes = 64 << 20
)

// Errors of the files evokore reads for itself; a *FileError wraps one.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("too large")
)

// FileError is a file evokore refused to read. Its text names the file
// and why: "<path>: not a regular file" or "<path>: exceeds N bytes".
type FileError struct {
	Path string
	// Err is ErrNotRegular or ErrTooLarge.
	Err   error
	Limit int64
}

func (e *FileError) Error() string { return e.Path + ": " + e.Reason() }

// Reason is the error without the path, for a message already positioned
// at the file.
func (e *FileError) Reason() string {
	if e.Err == ErrTooLarge {
		return fmt.Sprintf("exceeds %d bytes", e.Limit)
	}
	return e.Err.Error()
}

func (e *FileError) Unwrap() error { return e.Err }

// OwnFile is a file evokore reads for itself, opened by OpenOwn.
type OwnFile struct {
	f     *os.File
	path  string
	limit int64
	left  int64
}

// OpenOwn opens a file evokore reads for itself (its configuration, its
// state under EVOKORE_HOME), unlike Open for a path that comes from the
// operator rather than a model, so the errors say why: a missing file is
// the os error (errors.Is fs.ErrNotExist, for callers to whom absence
// means "no file"), permission errors too; a device, FIFO, socket,
// directory or file on a pseudo filesystem is a *FileError
// (ErrNotRegular), and reading past max bytes is a *FileError
// (ErrTooLarge).
func OpenOwn(path string, max int64) (*OwnFile, error) {
	// The stat keeps the open away from devices, whose open alone can
	// act or block; the descriptor is checked again below.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &FileError{Path: path, Err: ErrNotRegular}
	}
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() || onPseudoFS(f) {
		f.Close()
		return nil, &FileError{Path: path, Err: ErrNotRegular}
	}
	return &OwnFile{f: f, path: path, limit: max, left: max}, nil
}

// OpenAppend opens a file evokore appends to for itself (a log, a
// decision or record file under EVOKORE_HOME), created 0600 when
// missing. A FIFO, device, socket or directory at path is a *FileError
// (ErrNotRegular): opening a FIFO to write waits for a reader, so one
// planted in place of a log would hang the writer, and the router's
// shutdown behind it, for good.
func OpenAppend(path string) (*os.File, error) {
	// As in OpenOwn, the stat keeps the open away from devices, whose
	// open alone can act or block; the descriptor is checked again below.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, &FileError{Path: path, Err: ErrNotRegular}
	}
	f, err := openAppendNonBlocking(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &FileError{Path: path, Err: ErrNotRegular}
	}
	return f, nil
}

// Read reads within the cap; past it, a *FileError (ErrTooLarge).
func (o *OwnFile) Read(p []byte) (int, error) {
	if o.left <= 0 {
		// One byte more tells a file of exactly the cap from a larger one.
		var b [1]byte
		if n, _ := o.f.Read(b[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, &FileError{Path: o.path, Err: ErrTooLarge, Limit: o.limit}
	}
	if int64(len(p)) > o.left {
		p = p[:o.left]
	}
	n, err := o.f.Read(p)
	o.left -= int64(n)
	return n, err
}

// Seek moves the read offset (see os.File.Seek); the cap still counts
// the bytes read.
func (o *OwnFile) Seek(offset int64, whence int) (int64, error) { return o.f.Seek(offset, whence) }

// Info is the opened file's stat.
func (o *OwnFile) Info() (fs.FileInfo, error) { return o.f.Stat() }

// Close closes the file.
func (o *OwnFile) Close() error { return o.f.Close() }

// Load reads a whole file evokore reads for itself, within max bytes;
// errors as OpenOwn's. Every configuration and state file goes through
// it (or OpenOwn, LoadFS), so that none can grow the router or hang it.
func Load(path string, max int64) ([]byte, error) {
	o, err := OpenOwn(path, max)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	return io.ReadAll(o)
}

// LoadFS is Load for a file of fsys (a skills library: a directory or
// the embedded starter set); name is reported as display.
func LoadFS(fsys fs.FS, name, display string, max int64) ([]byte, error) {
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &FileError{Path: display, Err: ErrNotRegular}
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, &FileError{Path: display, Err: ErrNotRegular}
	}
	if of, ok := f.(*os.File); ok && onPseudoFS(of) {
		return nil, &FileError{Path: display, Err: ErrNotRegular}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &FileError{Path: display, Err: ErrTooLarge, Limit: max}
	}
	return b, nil
}
