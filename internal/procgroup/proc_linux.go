package procgroup

import (
	"bytes"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/evokore/evokore/internal/proctree"
)

// sysProcAttr puts the child in its own group and asks the kernel to kill
// it when the router dies, even by SIGKILL.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

var (
	prepOnce sync.Once
	// watchdogOff is set by tests that must see what holds without the
	// watchdog.
	watchdogOff bool
	// watchdogPipe is the write end the watchdog waits on; held for the
	// life of the process (a collected *os.File would close it). It is
	// only ever written, which is the point.
	//lint:ignore U1000 held, never read: its finalizer must not run
	watchdogPipe *os.File

	// startMu orders starts against the orphan reaper, so the reaper
	// never collects a leader whose exec.Cmd is about to wait for it.
	startMu sync.Mutex
	leaders = map[int]bool{}

	// subreaper is set once the router is a child subreaper: every
	// orphan of a tree is then one of its children.
	subreaper bool
	// walkChildren may be cleared by tests to exercise the full scan.
	walkChildren = true
)

// prepareRouter makes the router a child subreaper with an orphan reaper,
// and starts the watchdog, once.
func prepareRouter() {
	prepOnce.Do(func() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err == nil {
			subreaper = true
			ch := make(chan os.Signal, 1)
			signal.Notify(ch, syscall.SIGCHLD)
			go func() {
				for range ch {
					reapOrphans()
				}
			}()
		}
		if !watchdogOff {
			startWatchdog()
		}
	})
}

// startWatchdog re-runs this executable in watchdog mode (package
// proctree, whose init takes the process over before the rest of the
// binary initialises), in a group of its own and with no parent-death
// signal: it must outlive the router.
func startWatchdog() {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{proctree.WatchdogName}
	cmd.Env = []string{proctree.WatchdogEnv + "=" + treeVar() + "="}
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	_ = r.Close()
	if err != nil {
		_ = w.Close()
		return
	}
	watchdogPipe = w
}

func startLocked(cmd *exec.Cmd) error {
	startMu.Lock()
	defer startMu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	leaders[cmd.Process.Pid] = true
	return nil
}

func forget(pid int) {
	startMu.Lock()
	delete(leaders, pid)
	startMu.Unlock()
}

// waitExited blocks until pid has exited, without reaping it: its zombie
// keeps the pid and the group id from being reused while the tree is
// signalled.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// reapOrphans collects the zombies of descendants re-parented to the
// router: children of the router that are not leaders it waits for and
// not in its own process group (what the router runs through os/exec
// directly stays there, and its exec.Cmd reaps it).
func reapOrphans() {
	startMu.Lock()
	defer startMu.Unlock()
	self, group := os.Getpid(), syscall.Getpgrp()
	kids, ok := children(self)
	if !ok {
		for _, p := range proctree.Scan() {
			if p.PPID == self {
				kids = append(kids, p.PID)
			}
		}
	}
	for _, pid := range kids {
		p, ok := proctree.Stat(pid)
		if ok && p.State == 'Z' && p.PGID != group && !leaders[pid] {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
	}
}

// children lists pid's children from /proc/<pid>/task/*/children; false
// when the kernel does not provide those files.
func children(pid int) ([]int, bool) {
	base := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(base)
	if err != nil {
		return nil, false
	}
	tids, _ := d.Readdirnames(-1)
	_ = d.Close()
	var out []int
	found := false
	for _, tid := range tids {
		b, err := os.ReadFile(base + "/" + tid + "/children")
		if err != nil {
			continue
		}
		found = true
		for _, f := range bytes.Fields(b) {
			if c, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, found
}

// zombie reports a process that has exited and only waits to be reaped:
// state "Z" (zombie) or "X" (dead).
func zombie(pid int) bool {
	p, ok := proctree.Stat(pid)
	return ok && (p.State == 'Z' || p.State == 'X')
}

// signalTree signals the group led by pid, every process whose parent
// links lead to pid, and every process carrying the tree mark.
//
// The tree is read before anything is signalled: a killed parent's
// children are re-parented at once, and the links would be lost. With the
// router a subreaper, every orphan of the tree is a child of the router,
// so the tree is the leader's descendants plus the marked children of the
// router and their descendants, read through /proc/<pid>/task/*/children
// at a cost that grows with the tree, not with the machine. Without that,
// every process is read.
func signalTree(pid int, mark string, sig syscall.Signal) {
	m := []byte(mark)
	targets, ok := treeByChildren(pid, m)
	if !ok {
		targets = treeByScan(pid, m)
	}
	signalGroup(pid, sig)
	for t := range targets {
		_ = syscall.Kill(t, sig)
	}
}

// treeByChildren walks down from the leader and from the router's marked
// children.
func treeByChildren(pid int, mark []byte) (map[int]bool, bool) {
	if !subreaper || !walkChildren {
		return nil, false
	}
	self := os.Getpid()
	kids, ok := children(self)
	if !ok {
		return nil, false
	}
	targets := map[int]bool{}
	var queue []int
	if pid > 0 {
		queue = append(queue, pid)
	}
	for _, k := range kids {
		if k != pid && proctree.Marked(k, mark, true) {
			targets[k] = true
			queue = append(queue, k)
		}
	}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		cs, _ := children(next)
		for _, c := range cs {
			if !targets[c] && c != self {
				targets[c] = true
				queue = append(queue, c)
			}
		}
	}
	return targets, true
}

// treeByScan reads every process: parent links from the leader, and the
// mark in each environment.
func treeByScan(pid int, mark []byte) map[int]bool {
	procs := proctree.Scan()
	targets := map[int]bool{}
	if pid > 0 {
		kids := map[int][]int{}
		for _, p := range procs {
			kids[p.PPID] = append(kids[p.PPID], p.PID)
		}
		queue := []int{pid}
		for len(queue) > 0 {
			next := queue[0]
			queue = queue[1:]
			for _, c := range kids[next] {
				if !targets[c] {
					targets[c] = true
					queue = append(queue, c)
				}
			}
		}
	}
	self := os.Getpid()
	for _, p := range procs {
		if p.PID != self && !targets[p.PID] && p.State != 'Z' && proctree.Marked(p.PID, mark, true) {
			targets[p.PID] = true
		}
	}
	return targets
}
