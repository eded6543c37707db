//go:build unix

package stdio

import (
	"context"
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

// readerGonePoll is how often watchReader looks; it runs only while the
// end of input waits for answers.
const readerGonePoll = 100

// watchReader calls gone once nobody reads w any more: w is a pipe whose
// reading end closed (POLLERR), or a socket or terminal that hung up
// (POLLHUP). It returns when ctx ends. A client that closed only its
// writing end still reads, and is not reported. w that is not a file, or
// a regular file, is never reported.
func watchReader(ctx context.Context, w io.Writer, gone func()) {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return
	}
	for ctx.Err() == nil {
		// No events asked: POLLERR and POLLHUP are always reported.
		fds := []unix.PollFd{{Fd: int32(f.Fd())}}
		n, err := unix.Poll(fds, readerGonePoll)
		if err != nil && err != unix.EINTR {
			return
		}
		if n == 1 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			gone()
			return
		}
	}
}
