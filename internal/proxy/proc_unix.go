//go:build unix && !linux

package proxy

import (
	"os/exec"
	"syscall"
)

// childProcAttr puts a child in its own process group. Only Linux can tie
// the child's life to the router's.
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}
