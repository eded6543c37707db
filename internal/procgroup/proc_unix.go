//go:build unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// Prepare makes cmd start in a process group of its own.
func Prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = sysProcAttr()
}

// Kill sends SIGKILL to the process group led by pid, and to pid itself in
// case it left the group.
func Kill(pid int) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// KillGroup sends SIGKILL to the group pgid only: for a leader already
// reaped, whose pid may since name an unrelated process.
func KillGroup(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

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
