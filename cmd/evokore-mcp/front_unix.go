//go:build unix

package main

import (
	"bytes"
	"errors"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evokore/evokore/internal/handoff"
)

// readFirstFrame reads stdin until it holds a newline, wait has passed,
// it reached handoff.MaxPrelude, or the input ended. It reads the file
// descriptor directly (no buffering layer that could keep bytes back
// from the router) and returns every byte it read: they are the
// router's to read first.
func readFirstFrame(wait time.Duration) []byte {
	buf := make([]byte, 0, 4096)
	deadline := time.Now().Add(wait)
	for len(buf) < handoff.MaxPrelude {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		fds := []unix.PollFd{{Fd: 0, Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			break
		}
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
		room := buf[len(buf):min(cap(buf), handoff.MaxPrelude)]
		k, err := unix.Read(0, room)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil || k <= 0 {
			break
		}
		buf = buf[:len(buf)+k]
		if bytes.IndexByte(room[:k], '\n') >= 0 {
			break
		}
	}
	return buf
}

// writeLine writes line and a newline to stdout, whole; false if stdout
// failed, when the answer was not (all) given.
func writeLine(line []byte) bool {
	out := append(line[:len(line):len(line)], '\n')
	for len(out) > 0 {
		n, err := unix.Write(1, out)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			fds := []unix.PollFd{{Fd: 1, Events: unix.POLLOUT}}
			_, _ = unix.Poll(fds, -1)
			continue
		}
		if err != nil {
			return false
		}
		out = out[n:]
	}
	return true
}

// become replaces this process with the router; it returns only on
// failure.
func become(router string, args, env []string) error {
	return syscall.Exec(router, args, env)
}
