package routertest

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"testing"
)

// StartLines starts cmd, a process spoken to line by line on its stdio
// (a router, the stdio front), and returns its stdin, its stdout as lines
// (end-of-line bytes trimmed; the channel, buffering buffer lines, closes
// with stdout) and its stderr as kept so far. The process is killed when
// the test ends.
func StartLines(t testing.TB, cmd *exec.Cmd, buffer int) (io.WriteCloser, <-chan []byte, *Buffer) {
	t.Helper()
	stderr := &Buffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan []byte, buffer)
	go func() {
		defer close(lines)
		br := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				lines <- bytes.TrimRight(line, "\r\n")
			}
			if err != nil {
				return
			}
		}
	}()
	return stdin, lines, stderr
}
