//go:build !unix

package safefile

import (
	"io/fs"
	"os"
)

func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }

func openAppendNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
}

// privileged has no owner to compare against here; the permission bits
// of other platforms do not carry the same meaning.
func privileged(fs.FileInfo) bool { return false }
