package main_test

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// waitPipeFull waits until the pipe on process pid's stdin holds all it
// can: whatever writes to it next blocks. It looks through /proc, without
// reading a byte. A pipe keeps its bytes in pages, one write's tail in a
// page of its own: with less than a page free, every page is taken.
func waitPipeFull(t *testing.T, pid string) {
	t.Helper()
	f, err := os.OpenFile("/proc/"+pid+"/fd/0", os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, err := unix.FcntlInt(f.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		n, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ) // FIONREAD: bytes waiting
		if err != nil {
			t.Fatal(err)
		}
		if n > size-os.Getpagesize() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pipe on %s's stdin holds %d of %d bytes", pid, n, size)
		}
	}
}
