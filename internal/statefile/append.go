package statefile

import (
	"os"
	"path/filepath"
)

// AppendLine appends one line to path under an exclusive advisory lock, so
// concurrent writers (routers, CLIs) never interleave or lose a line. The
// line must not contain a newline; one is added.
func AppendLine(path string, line []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := Lock(f); err != nil {
		return err
	}
	defer Unlock(f)
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	if _, err := f.Write(buf); err != nil {
		return err
	}
	return f.Sync()
}
