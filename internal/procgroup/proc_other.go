//go:build unix && !linux

package procgroup

import "syscall"

// sysProcAttr puts the child in its own group. Only Linux can tie the
// child's life to the router's.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// zombie cannot be told apart portably; kill(pid, 0) decides alone.
func zombie(int) bool { return false }
