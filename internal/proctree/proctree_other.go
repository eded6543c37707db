//go:build !linux

package proctree

// DropFilePages does nothing elsewhere than on Linux: it returns 0.
func DropFilePages() int { return 0 }
