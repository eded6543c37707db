//go:build unix

package safefile

import (
	"io/fs"
	"os"
	"syscall"
)

// openNonBlocking opens without waiting for a FIFO's writer and without
// making a terminal the controlling one.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
}

// openAppendNonBlocking opens for appending without waiting for a
// FIFO's reader: with none, the open fails (ENXIO) instead.
func openAppendNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0o600)
}

// privileged reports a file no one but its owner and group may read,
// unless the router's own non-root user owns it.
func privileged(fi fs.FileInfo) bool {
	if fi.Mode().Perm()&0o004 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	uid := os.Geteuid()
	return uid == 0 || int(st.Uid) != uid
}
