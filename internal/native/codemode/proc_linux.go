package codemode

import (
	"os/exec"
	"syscall"
)

// sandboxAttr makes the sandbox die with the router: a router killed
// mid-run leaves no program running.
func sandboxAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
