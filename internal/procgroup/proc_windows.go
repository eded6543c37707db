package procgroup

import (
	"os"
	"os/exec"
)

// Prepare does nothing on Windows, which has no process groups to signal.
func Prepare(*exec.Cmd) {}

// Kill ends the process; its children are not reached.
func Kill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// Alive reports whether the process can still be opened.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}

// GroupAlive is Alive: Windows has no process groups.
func GroupAlive(pgid int) bool { return Alive(pgid) }

// KillGroup does nothing: Windows has no process groups, and the leader is
// gone.
func KillGroup(int) {}
