// Package statefile reads and writes the router's state under EVOKORE_HOME.
// Every write goes to a temporary file in the same directory that is then
// renamed over the target, so a reader (or a crash) never sees half a file.
package statefile

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/evokore/evokore/internal/safefile"
)

// WriteAtomic replaces path with data, creating parent directories.
func WriteAtomic(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// WriteJSON writes v as indented JSON, atomically.
func WriteJSON(path string, v any, perm fs.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteAtomic(path, append(data, '\n'), perm)
}

// ReadJSON reads path into v. A missing file reports ok=false and no
// error. Anything but a regular file, or one past safefile.MaxStateBytes,
// is an error that names the file (see safefile.Load).
func ReadJSON(path string, v any) (ok bool, err error) {
	data, err := safefile.Load(path, safefile.MaxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(data, v)
}
