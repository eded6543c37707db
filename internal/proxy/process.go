package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/procgroup"
)

// childEnv is a stdio child's environment policy: the base allowlist
// (or the whole environment with inheritEnv) plus the server's own env,
// and the router's depth mark, so an evokore reached through a wrapper
// starts no children of its own.
func childEnv(s config.Server, env config.Env) procgroup.Env {
	return procgroup.Env{Parent: env, Inherit: s.InheritEnv, Set: config.ChildMarker(s.Env, env)}
}

// resolveCommand maps `npx` to `npx.cmd` on Windows, as EVOKORE-MCP does;
// everything else must be on PATH as written.
func resolveCommand(cmd string) string {
	if runtime.GOOS == "windows" && cmd == "npx" {
		return "npx.cmd"
	}
	return cmd
}

// process is a running stdio child.
type process struct {
	cmd    *procgroup.Cmd
	stdin  *lockedStdin
	stdout *jsonLines
	// wire is the connection's line carrier (wire.go).
	wire *wire
	done chan struct{} // closed when the process has exited
	err  error         // exit status, valid after done
}

// startProcess starts a stdio child through the launcher (own group,
// parent-death signal, tree containment) with stderr forwarded to log line
// by line, prefixed with the server id, and stdout filtered so that only
// JSON lines reach the MCP transport. Each write to its stdin must finish
// within stdinBound (lockedStdin); when one does not, stuck is called and
// the process stopped with grace.
func startProcess(s config.Server, env config.Env, log io.Writer, grace, stdinBound time.Duration, stuck func()) (*process, error) {
	cmd := procgroup.Command(context.Background(), procgroup.Spec{
		Path: resolveCommand(s.Command), Args: s.Args, Dir: s.Dir,
		Env: childEnv(s, env), Grace: grace,
	})
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		_ = stdout.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		_ = stdout.Close()
		_ = stderr.Close()
		return nil, err
	}
	prefix := "[" + s.ID + "] "
	var p *process
	lw := newLockedStdin(stdin, stdinBound, func() {
		if stuck != nil {
			stuck()
		}
		p.stopAfter(grace)
	})
	p = &process{cmd: cmd, stdin: lw, stdout: newJSONLines(stdout, log, prefix), wire: newWire(lw), done: make(chan struct{})}
	p.stdout.take, p.stdout.ended = p.wire.take, p.wire.close
	var drained sync.WaitGroup
	drained.Add(1)
	go func() {
		defer drained.Done()
		defer stderr.Close()
		forwardLines(stderr, log, prefix)
	}()
	go func() {
		p.err = cmd.Wait()
		// The tree is gone, so stderr reaches EOF: log all of it before
		// anyone reads how the child ended.
		drained.Wait()
		close(p.done)
	}()
	return p, nil
}

// maxForwardedLine bounds one forwarded stderr line; the rest of a longer
// line is dropped (and said so), never buffered.
const maxForwardedLine = 16 << 10

// forwardLines copies r to w one line at a time with a prefix, so lines
// from different children never interleave mid-line. A line of any length
// is read through to its end, so a child that prints megabytes without a
// newline never blocks on a full pipe.
func forwardLines(r io.Reader, w io.Writer, prefix string) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	dropped := 0
	for {
		chunk, err := br.ReadSlice('\n')
		room := maxForwardedLine - len(line)
		if len(chunk) > room {
			dropped += len(chunk) - room
			chunk = chunk[:room]
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 || dropped > 0 {
			text := strings.TrimRight(string(line), "\r\n")
			if dropped > 0 {
				text += fmt.Sprintf(" … [%d more bytes]", dropped)
			}
			fmt.Fprintf(w, "%s%s\n", prefix, text)
		}
		line, dropped = line[:0], 0
		if err != nil {
			return
		}
	}
}

// stop ends the process the way the MCP spec asks: close its stdin, wait,
// then SIGTERM and finally SIGKILL its whole tree, so helpers it started
// (npx starts node) go too.
func (p *process) stopAfter(grace time.Duration) {
	p.cmd.StopAfter(grace)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C: // a process stuck in the kernel; not waited for
	}
}

// exitErr is how the process ended, once it has.
func (p *process) exitErr() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}
