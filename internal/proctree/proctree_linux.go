package proctree

import (
	"bytes"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// WatchdogEnv switches a binary that links this package into watchdog
// mode; its value is the tree mark prefix ("NAME=") of the router's
// processes.
const WatchdogEnv = "EVOKORE_PROCGROUP_WATCHDOG"

// WatchdogName is the watchdog's process name (argv[0] and the kernel's
// comm, which keeps the first 15 bytes).
const WatchdogName = "evokore-watchdog"

func init() {
	if mark, ok := syscall.Getenv(WatchdogEnv); ok {
		if !treeMark([]byte(mark)) {
			// The watchdog kills every process whose environment starts
			// with the mark: an empty one, or another variable's name,
			// would take the user's other processes with the router's.
			_, _ = os.Stderr.WriteString(WatchdogName + ": " + WatchdogEnv + " is not a tree mark; nothing is watched\n")
			os.Exit(2)
		}
		runWatchdog([]byte(mark))
		os.Exit(0)
	}
}

// runWatchdog waits for the router to go (its stdin, a pipe only the
// router holds the write end of, reads EOF), then kills every process
// that carries the router's tree mark until none is left.
func runWatchdog(mark []byte) {
	name := []byte(WatchdogName + "\x00")
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0)
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT)
	_, _ = io.Copy(io.Discard, os.Stdin)
	for range 200 {
		if KillMarked(mark, syscall.SIGKILL) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Proc is one line of /proc/<pid>/stat, the fields the launcher uses.
type Proc struct {
	PID, PPID, PGID int
	State           byte
}

// Scan lists the processes under /proc.
func Scan() []Proc {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]Proc, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, ok := Stat(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// Stat reads /proc/<pid>/stat: the command name is in parentheses and may
// hold spaces, so the fields are taken after the last ')'.
func Stat(pid int) (Proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return Proc{}, false
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 3 {
		return Proc{}, false
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	pgid, _ := strconv.Atoi(string(f[2]))
	return Proc{PID: pid, PPID: ppid, PGID: pgid, State: f[0][0]}, true
}

// Marked reports whether the process's initial environment holds mark (a
// whole "NAME=" prefix, or "NAME=value" matched as a whole entry).
func Marked(pid int, mark []byte, whole bool) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for len(b) > 0 {
		entry := b
		if i := bytes.IndexByte(b, 0); i >= 0 {
			entry, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if whole && bytes.Equal(entry, mark) || !whole && bytes.HasPrefix(entry, mark) {
			return true
		}
	}
	return false
}

// KillMarked signals every other live process whose environment carries
// the prefix mark and returns how many it found.
func KillMarked(mark []byte, sig syscall.Signal) int {
	self, n := os.Getpid(), 0
	for _, p := range Scan() {
		if p.PID == self || p.State == 'Z' || p.State == 'X' || !Marked(p.PID, mark, false) {
			continue
		}
		_ = syscall.Kill(p.PID, sig)
		n++
	}
	return n
}
