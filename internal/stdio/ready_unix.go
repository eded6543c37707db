//go:build unix

package stdio

import (
	"io"

	"golang.org/x/sys/unix"
)

// inputWaiting reports whether r is a file with bytes to read now.
func inputWaiting(r io.Reader) bool {
	f, ok := r.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 1 && fds[0].Revents&unix.POLLIN != 0
}
