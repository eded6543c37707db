package codemode

import (
	"os/exec"
	"syscall"
)

// sandboxAttr makes the sandbox die with the router: a router killed
// mid-run leaves no program running. The sandbox stays in the router's
// process group: the router reaps zombie children outside it as orphans
// (package procgroup), which would take the sandbox's exit status from
// its Wait and turn "killed at its CPU bound" into "no child processes".
func sandboxAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
