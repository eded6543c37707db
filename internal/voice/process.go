package voice

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/procgroup"
)

// runProcess runs a helper program (a player, ffmpeg, a local whisper) to
// completion. It is the one place this package starts a process: in a
// process group of its own, killed with its group when ctx ends, so a
// player never outlives the sidecar.
func runProcess(ctx context.Context, argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr tailBuffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 2 * time.Second
	procgroup.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			if tail := strings.TrimSpace(stderr.String()); tail != "" {
				return fmt.Errorf("%s: %w: %s", argv[0], err, tail)
			}
			return fmt.Errorf("%s: %w", argv[0], err)
		}
		return nil
	case <-ctx.Done():
		procgroup.Kill(cmd.Process.Pid)
		<-done
		return ctx.Err()
	}
}

// tailBuffer keeps the last 1 KiB written to it: enough of a helper's
// stderr to explain a failure, never a whole log.
type tailBuffer struct{ b bytes.Buffer }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b.Write(p)
	if over := t.b.Len() - 1024; over > 0 {
		t.b.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return t.b.String() }
