//go:build !unix

package main

import "syscall"

// helperAttr has no sessions to leave here.
func helperAttr(bool) *syscall.SysProcAttr { return nil }
