//go:build !unix

package safefile

import (
	"io/fs"
	"os"
)

func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }

// privileged has no owner to compare against here; the permission bits
// of other platforms do not carry the same meaning.
func privileged(fs.FileInfo) bool { return false }
