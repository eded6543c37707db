package metrics

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// userHZ is the kernel's clock tick for /proc times: 100 on every Linux
// evokore runs on (the client library assumed the same).
const userHZ = 100

// processFamilies reads the process's series from /proc now; a file that
// cannot be read leaves its series out rather than reporting zero.
func processFamilies() []family {
	var out []family
	one := func(name, typ, help string, v float64) {
		f := family{name: name, typ: typ, help: help}
		f.add("", v)
		out = append(out, f)
	}
	if stat, err := os.ReadFile("/proc/self/stat"); err == nil {
		// The fields after the command, which is in parentheses and may
		// hold spaces: the first is field 3 of proc(5).
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
			f := bytes.Fields(stat[i+1:])
			field := func(n int) float64 {
				if n-3 >= len(f) {
					return 0
				}
				v, _ := strconv.ParseFloat(string(f[n-3]), 64)
				return v
			}
			if len(f) >= 22 {
				one("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", (field(14)+field(15))/userHZ)
				one("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", field(23))
				one("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", field(24)*float64(os.Getpagesize()))
				if boot := bootTime(); boot > 0 {
					one("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", boot+field(22)/userHZ)
				}
			}
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		one("process_open_fds", "gauge", "Number of open file descriptors.", float64(len(fds)))
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		one("process_max_fds", "gauge", "Maximum number of open file descriptors.", float64(lim.Cur))
	}
	return out
}

// bootTime is the system's boot time, seconds since the epoch, from
// /proc/stat; zero when unknown.
func bootTime() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			n, _ := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
			return n
		}
	}
	return 0
}
