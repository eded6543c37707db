package codemode

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// limitSelf bounds the sandbox process before it parses the program:
// its address space may grow by l.Memory beyond what it maps now
// (RLIMIT_AS, which the Go runtime meets as a failed allocation and ends
// the process with "out of memory"), and its CPU time is capped one to
// two seconds past l.CPU (RLIMIT_CPU, a backstop to the engine's
// interrupt). The program cannot raise them: it has no system calls.
func limitSelf(l Limits) error {
	tuneRuntime()
	if l.Memory > 0 {
		base, err := vmSize()
		if err != nil {
			return err
		}
		max := uint64(base + l.Memory)
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: max, Max: max}); err != nil {
			return fmt.Errorf("RLIMIT_AS: %w", err)
		}
	}
	if l.CPU > 0 {
		// RLIMIT_CPU counts whole seconds: the first at least a second
		// past l.CPU. The soft limit is the hard one: the Go runtime
		// ignores the SIGXCPU a soft limit sends, so only the hard
		// limit's SIGKILL ends the process.
		secs := uint64((l.CPU+time.Second-1)/time.Second) + 1
		if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: secs, Max: secs}); err != nil {
			return fmt.Errorf("RLIMIT_CPU: %w", err)
		}
	}
	return nil
}

// vmSize is the process's mapped address space now, from
// /proc/self/status.
func vmSize() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmSize in /proc/self/status")
}

// cpuUsed is the CPU time the process has used, user and system.
func cpuUsed() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Supported reports whether this platform can bound a run's memory.
const Supported = true
