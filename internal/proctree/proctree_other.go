//go:build !linux

package proctree

// DropFilePages does nothing elsewhere than on Linux: it returns 0.
func DropFilePages() int { return 0 }

// CanDrop is false elsewhere than on Linux.
func CanDrop(lo, hi uintptr) bool { return false }

// Drop does nothing elsewhere than on Linux.
func Drop(lo, hi uintptr) bool { return false }
