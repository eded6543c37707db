package testutil

import (
	"net"
	"testing"
)

// HangUpListener listens on a loopback port, counts each connection on
// the returned channel (before it hangs up, so before the dialer sees
// its dial fail) and closes it: a stand-in for a server a test wants to
// see dialed, or not. It stops with the test.
func HangUpListener(t testing.TB) (addr string, dialed <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	ch := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			ch <- struct{}{}
			_ = c.Close()
		}
	}()
	return ln.Addr().String(), ch
}
