package codemode

import (
	"math"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// sandboxEnv is the sandbox's whole environment. The Go runtime opens
// the cgroup's CPU files at start and keeps them open to follow the
// quota; the sandbox sets its own GOMAXPROCS and needs neither the quota
// nor the files, so it is told not to open them.
var sandboxEnv = map[string]string{"GODEBUG": "containermaxprocs=0,updatemaxprocs=0"}

// keepFilesFromSandbox marks every descriptor of the router above
// stderr close-on-exec, so that the sandbox starts with its three pipes
// and nothing else. What Go opens is close-on-exec already; what is not
// came from whoever started the router (a client's pipe, a file it left
// open) or from a raw system call, and os/exec passes it on to every
// child. It is redone before each sandbox starts: it is one system call
// (a scan of /proc/self/fd on kernels before 5.11).
func keepFilesFromSandbox() {
	if unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
