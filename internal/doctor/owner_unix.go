//go:build unix

package doctor

import (
	"io/fs"
	"os"
	"syscall"
)

// othersCanWrite reports a directory another user can write into: one
// writable by everyone (sticky or not: others can still add the files
// that are missing), or one owned by another user than this one and root.
func othersCanWrite(fi fs.FileInfo) bool {
	if fi.Mode().Perm()&0o002 != 0 {
		return true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Uid != 0 && int(st.Uid) != os.Geteuid()
}
