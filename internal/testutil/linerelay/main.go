// Command linerelay is the floor a stdio MCP proxy is measured against:
// it starts the command named by its arguments and copies lines between
// its own stdio and the child's, without looking at them. The proxy
// benchmark (make bench-proxy) runs it beside a direct connection and
// evokore, so evokore's cost is read against what merely relaying lines
// through a second Go process costs.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: linerelay COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	done := make(chan struct{})
	go func() {
		relay(os.Stdout, out)
		close(done)
	}()
	relay(in, os.Stdin)
	_ = in.Close()
	<-done
	_ = cmd.Wait()
}

// relay copies whole lines from r to w, one write per line.
func relay(w io.Writer, r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := w.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
