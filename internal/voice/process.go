package voice

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/procgroup"
)

// runProcess runs a helper program (a player, ffmpeg, a local whisper) to
// completion. It is the one place this package starts a process: through
// the router's one launcher, so its whole tree is killed when ctx ends
// and a player never outlives the sidecar. Helpers get the sidecar's
// whole environment: they are the user's own audio tools (they need
// DISPLAY, PULSE_SERVER, XDG_RUNTIME_DIR and the like), and nothing a
// model wrote reaches their arguments but text to speak, in a file.
func runProcess(ctx context.Context, argv []string) error {
	cmd := procgroup.Command(ctx, procgroup.Spec{
		Path: argv[0], Args: argv[1:],
		Env:   procgroup.Env{Parent: config.ProcessEnv(), Inherit: true},
		Grace: 2 * time.Second,
	})
	var stderr tailBuffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		if tail := strings.TrimSpace(stderr.String()); tail != "" {
			return fmt.Errorf("%s: %w: %s", argv[0], err, tail)
		}
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	return nil
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
