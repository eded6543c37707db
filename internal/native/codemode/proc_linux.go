package codemode

import (
	"os/exec"
	"syscall"
)

// sandboxAttr makes the sandbox die with the router: a router killed
// mid-run leaves no program running. Its process group is its own, so a
// signal to the router's group (Ctrl-C at a terminal: a graceful
// shutdown that lets calls finish; SIGHUP: a reload) does not end a run;
// it is started with procgroup.StartOwn so that its Wait, not the
// router's orphan reaper, collects it.
func sandboxAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
