package procgroup

import (
	"os"
	"os/exec"
	"syscall"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// sysProcAttr is nil: Windows has no process groups to signal.
func sysProcAttr() *syscall.SysProcAttr { return nil }

func prepareRouter() {}

func startLocked(cmd *exec.Cmd) error { return cmd.Start() }

func waitExited(int) {}

func forget(int) {}

// signalTree kills the process itself; its children are not reached.
func signalTree(pid int, _ string, _ syscall.Signal) {
	if pid <= 0 {
		return
	}
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
