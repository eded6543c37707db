//go:build unix && !linux

package procgroup

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the child in its own group. Only Linux can tie the
// child's life to the router's.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// zombie cannot be told apart portably; kill(pid, 0) decides alone.
func zombie(int) bool { return false }

// prepareRouter has nothing to set up: no subreaper, no watchdog here.
func prepareRouter() {}

func startLocked(cmd *exec.Cmd) error { return cmd.Start() }

// waitExited returns at once: without waitid's WNOWAIT the group is
// signalled after the leader is reaped, as before.
func waitExited(int) {}

func forget(int) {}

// signalTree reaches the process group only: there is no /proc to walk.
func signalTree(pid int, _ string, sig syscall.Signal) { signalGroup(pid, sig) }
