package catalog

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is Linux's CLOCK_THREAD_CPUTIME_ID, which package
// syscall does not name; getrusage's thread times count whole clock
// ticks, too coarse for a search.
const clockThreadCPUTime = 3

// threadCPU is the CPU time the calling OS thread has used. A search's
// CPU time is its latency without the time it waited for a core, which
// on a loaded machine is most of its wall-clock p99.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
