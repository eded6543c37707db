//go:build unix

package procgroup

import (
	"errors"
	"syscall"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// Alive reports whether pid names a live process. EPERM means the process
// exists but belongs to someone else, so it is alive; a zombie is dead.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !zombie(pid)
}

// GroupAlive reports whether any process is left in the group pgid.
func GroupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// signalGroup signals the group led by pid and pid itself; a pid of zero
// (leader reaped) signals nothing.
func signalGroup(pid int, sig syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
		_ = syscall.Kill(pid, sig)
	}
}
