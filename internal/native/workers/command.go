package workers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/procgroup"
)

// outputTail is how much of a command's output a result keeps: the end,
// where test runners print their verdicts.
const outputTail = 16 << 10

// tail keeps the last n bytes written to it.
type tail struct {
	mu    sync.Mutex
	n     int
	buf   []byte
	total int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += len(p)
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.n {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.n:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.total > len(t.buf) {
		return fmt.Sprintf("[%d earlier bytes omitted]\n%s", t.total-len(t.buf), t.buf)
	}
	return string(t.buf)
}

// run is one finished command.
type run struct {
	ExitCode   int     `json:"exitCode"`
	DurationMs float64 `json:"durationMs"`
	TimedOut   bool    `json:"timedOut,omitempty"`
	output     string
}

// errTimeout reports a command that ran past its time limit.
var errTimeout = errors.New("timed out")

// execute runs argv in dir through the launcher, and kills its tree when
// ctx ends or timeout passes. A command that cannot start is an
// error; a non-zero exit is not.
func (m *Manager) execute(ctx context.Context, argv []string, dir string, timeout time.Duration, keep bool) (run, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The launcher kills the command's whole tree when ctx ends and
	// whatever it left running once it exits.
	cmd := procgroup.Command(ctx, procgroup.Spec{Path: argv[0], Args: argv[1:], Dir: dir,
		Env: procgroup.Env{Parent: m.env, Toolchain: true}, Grace: 5 * time.Second})
	out := &tail{n: outputTail}
	if keep {
		cmd.Stdout, cmd.Stderr = out, out
	}
	start := time.Now()
	err := cmd.Run()
	r := run{DurationMs: float64(time.Since(start).Microseconds()) / 1000, output: out.String()}
	if cmd.ProcessState != nil {
		r.ExitCode = cmd.ProcessState.ExitCode()
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.TimedOut = true
		return r, fmt.Errorf("%w after %dms", errTimeout, timeout.Milliseconds())
	case ctx.Err() != nil:
		return r, ctx.Err()
	case cmd.ProcessState == nil:
		return r, fmt.Errorf("cannot start %q: %v", argv[0], err)
	}
	return r, nil
}
