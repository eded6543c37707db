//go:build unix

package main

import "syscall"

// helperAttr makes the helper call setsid when asked: a new session and
// group, out of reach of a signal to its parent's group.
func helperAttr(setsid bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: setsid} }
