package testutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/evokore/evokore/internal/procgroup"
)

// Terminal is a pseudo-terminal a test runs a program on, as an operator
// at a terminal would: the program's stdin, stdout and stderr are the
// terminal, and the test types on the other side.
type Terminal struct {
	master, slave *os.File
	mu            sync.Mutex
	out           bytes.Buffer
	done          chan struct{}
}

// NewTerminal opens a pseudo-terminal, closed when the test ends.
func NewTerminal(t testing.TB) *Terminal {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		t.Fatalf("pty number: %v", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	term := &Terminal{master: master, slave: slave, done: make(chan struct{})}
	go func() {
		defer close(term.done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return // EIO once every slave side is closed
			}
		}
	}()
	t.Cleanup(func() { slave.Close(); master.Close() })
	return term
}

// Run runs cmd on the terminal, once per Terminal, (its controlling terminal, in a session of
// its own) with typed already waiting as input, and returns what it
// printed and its exit code.
func (term *Terminal) Run(t testing.TB, cmd *exec.Cmd, typed string) (string, int) {
	t.Helper()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term.slave, term.slave, term.slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if _, err := io.WriteString(term.master, typed); err != nil {
		t.Fatal(err)
	}
	// In a session of its own, so procgroup's orphan reaper (a router
	// running in this test process has one) must be told that this Wait
	// reaps it.
	waited, err := procgroup.StartOwn(cmd)
	if err == nil {
		err = cmd.Wait()
		waited()
	}
	term.slave.Close()
	<-term.done
	term.mu.Lock()
	defer term.mu.Unlock()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return term.out.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return term.out.String(), 0
}
