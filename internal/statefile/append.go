package statefile

import (
	"os"
	"path/filepath"

	"github.com/evokore/evokore/internal/safefile"
)

// AppendLine appends one line to path under an exclusive advisory lock, so
// concurrent writers (routers, CLIs) never interleave or lose a line, and
// syncs it to disk. The line must not contain a newline; one is added.
func AppendLine(path string, line []byte) error {
	buf := make([]byte, 0, len(line)+1)
	return appendLines(path, append(append(buf, line...), '\n'), true)
}

// AppendLines appends whole lines (data ends with a newline) to path
// with one write under the same lock as AppendLine, without syncing:
// for records written many times a second, which survive the process
// that writes them but not a power cut in the seconds after.
func AppendLines(path string, data []byte) error { return appendLines(path, data, false) }

func appendLines(path string, data []byte, sync bool) error {
	if !sync {
		return AppendHeld(path, data)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := safefile.OpenAppend(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := Lock(f); err != nil {
		return err
	}
	defer Unlock(f)
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Sync()
}

// AppendHeld appends data to path in one write under the file's lock,
// keeping the file open for the next append (held.go).
func AppendHeld(path string, data []byte) error {
	return withHeld(path, func(f *os.File) error {
		if err := Lock(f); err != nil {
			return err
		}
		defer Unlock(f)
		_, err := f.Write(data)
		return err
	})
}

// WriteHeld appends data to path in one write, keeping the file open
// for the next append; the caller holds whatever lock orders the writers.
func WriteHeld(path string, data []byte) error {
	return withHeld(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}
