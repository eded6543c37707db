package procgroup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"github.com/evokore/evokore/internal/proctree"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultGrace is the wait of each step of [Cmd.Stop] when the spec sets
// none.
const DefaultGrace = 2 * time.Second

var (
	routerToken = newToken()
	treeSeq     atomic.Int64
)

func newToken() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// treeVar is this router's tree mark variable.
func treeVar() string { return proctree.TreeVarPrefix + routerToken }

// Spec is what to start.
type Spec struct {
	Path string
	Args []string
	Dir  string
	Env  Env
	// Grace is the wait of each step of Stop (after closing stdin, after
	// SIGTERM); zero means DefaultGrace.
	Grace time.Duration
}

// Cmd is a started (or startable) process and its tree. The embedded
// exec.Cmd may be configured (Stdin, Stdout, Stderr, WaitDelay) before
// Start; Start, Wait, Run and the pipe methods must be called on Cmd.
type Cmd struct {
	*exec.Cmd
	grace time.Duration
	tree  string

	// parentEnds are our copies of the child's pipe ends, closed after
	// Start.
	parentEnds []*os.File
	readEnds   []*os.File
	stdin      io.Closer

	started atomic.Bool
	done    chan struct{}
	err     error
}

// Command prepares a process as the spec says: its own process group, the
// parent-death signal (Linux), the environment policy, and cancellation
// by ctx killing its whole tree.
func Command(ctx context.Context, s Spec) *Cmd {
	cmd := exec.CommandContext(ctx, s.Path, s.Args...)
	cmd.Dir = s.Dir
	c := &Cmd{Cmd: cmd, grace: s.Grace, done: make(chan struct{})}
	if c.grace <= 0 {
		c.grace = DefaultGrace
	}
	c.tree = strconv.FormatInt(treeSeq.Add(1), 10)
	cmd.Env = append(s.Env.List(), inheritedMarks()...)
	cmd.Env = append(cmd.Env, treeVar()+"="+c.tree)
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error {
		c.signalTree(sigKill)
		return nil
	}
	cmd.WaitDelay = c.grace
	return c
}

// inheritedMarks are the tree marks of routers above this one, so that
// their watchdogs still find what this router starts.
func inheritedMarks() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, proctree.TreeVarPrefix) && !strings.HasPrefix(kv, treeVar()+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// StdinPipe is exec.Cmd's, remembered so that Stop can close it first.
func (c *Cmd) StdinPipe() (io.WriteCloser, error) {
	w, err := c.Cmd.StdinPipe()
	if err == nil {
		c.stdin = w
	}
	return w, err
}

// StdoutPipe returns a pipe connected to the process's stdout. Unlike
// exec.Cmd's, Wait does not close it: it reads to EOF (the tree is killed
// when the leader exits, so EOF comes), and the reader closes it.
func (c *Cmd) StdoutPipe() (io.ReadCloser, error) {
	r, w, err := c.pipe()
	if err != nil {
		return nil, err
	}
	c.Stdout = w
	return r, nil
}

// StderrPipe is StdoutPipe for stderr.
func (c *Cmd) StderrPipe() (io.ReadCloser, error) {
	r, w, err := c.pipe()
	if err != nil {
		return nil, err
	}
	c.Stderr = w
	return r, nil
}

func (c *Cmd) pipe() (*os.File, *os.File, error) {
	if c.started.Load() {
		return nil, nil, errors.New("procgroup: pipe after Start")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	c.parentEnds = append(c.parentEnds, w)
	c.readEnds = append(c.readEnds, r)
	return r, w, nil
}

// StartOwn starts cmd, a process the caller reaps itself with cmd.Wait
// and has put in a process group or session of its own (a terminal
// session in a test). The router reaps its orphans, and an orphan is a
// zombie child outside the router's group that no Cmd waits for: such a
// process would be reaped before its Wait, which then fails with "no
// child processes". StartOwn marks it as waited for; call the returned
// func once Wait has returned. A process in the router's own group needs
// none of this.
func StartOwn(cmd *exec.Cmd) (waited func(), err error) {
	if err := startLocked(cmd); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	return func() { forget(pid) }, nil
}

// Start starts the process; a goroutine then waits for it, kills what is
// left of its tree and reaps it.
func (c *Cmd) Start() error {
	if !c.started.CompareAndSwap(false, true) {
		return errors.New("procgroup: already started")
	}
	prepareRouter()
	err := startLocked(c.Cmd)
	for _, f := range c.parentEnds {
		_ = f.Close()
	}
	if err != nil {
		for _, f := range c.readEnds {
			_ = f.Close()
		}
		c.err = err
		close(c.done)
		return err
	}
	go c.reap()
	return nil
}

// reap waits for the leader, ends its tree while the leader's pid is still
// held by its zombie, then collects it.
func (c *Cmd) reap() {
	pid := c.Process.Pid
	waitExited(pid)
	c.signalTree(sigKill)
	c.err = c.Cmd.Wait()
	forget(pid)
	close(c.done)
}

// Wait waits for the process to exit and returns its status, as exec.Cmd
// does; what the process left running is killed by then.
func (c *Cmd) Wait() error {
	if !c.started.Load() {
		return errors.New("procgroup: not started")
	}
	<-c.done
	return c.err
}

// Run starts the process and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Done is closed once the process has exited and been reaped.
func (c *Cmd) Done() <-chan struct{} { return c.done }

// Exited reports whether the process has exited and been reaped.
func (c *Cmd) Exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Stop ends the process the bounded way: close its stdin, wait the grace,
// SIGTERM its tree, wait the grace, SIGKILL its tree. It returns once the
// leader is reaped (after SIGKILL, within the grace; a process stuck in
// the kernel may take longer, and Stop then returns without it).
func (c *Cmd) Stop() { c.StopAfter(c.grace) }

// StopAfter is Stop with another grace.
func (c *Cmd) StopAfter(grace time.Duration) {
	if !c.started.Load() {
		return
	}
	if c.stdin != nil {
		_ = c.stdin.Close()
	}
	if c.waitFor(grace) {
		return
	}
	c.signalTree(sigTerm)
	if c.waitFor(grace) {
		return
	}
	c.signalTree(sigKill)
	c.waitFor(grace)
}

// Kill SIGKILLs the whole tree at once.
func (c *Cmd) Kill() {
	if c.started.Load() {
		c.signalTree(sigKill)
	}
}

func (c *Cmd) waitFor(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.done:
		return true
	case <-t.C:
		return false
	}
}

// signalTree signals the leader's group, its descendants and every
// process carrying its tree mark.
func (c *Cmd) signalTree(sig syscall.Signal) {
	if c.Process == nil {
		return
	}
	pid := c.Process.Pid
	if c.Exited() {
		// Reaped: the pid may name another process by now; only the
		// marked processes are still certainly ours.
		pid = 0
	}
	signalTree(pid, treeVar()+"="+c.tree, sig)
}
