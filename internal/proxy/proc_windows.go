package proxy

import (
	"os"
	"os/exec"
	"syscall"
)

func childProcAttr() *syscall.SysProcAttr { return nil }

var (
	sigTerm os.Signal = os.Kill
	sigKill os.Signal = os.Kill
)

// signalGroup kills the child; Windows has no process groups to signal.
func signalGroup(cmd *exec.Cmd, _ os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
