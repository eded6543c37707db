package logging_test

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/logging"
)

func TestCompatibilityLinesPrintExactly(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(&buf, slog.LevelInfo)
	log.Info("[EVOKORE] Proxy bootstrap complete: 3 proxied tool(s) registered.")
	log.Warn("[EVOKORE] Background proxy bootstrap failed: boom")
	log.Debug("not shown")
	log.With("server", "github").Warn("boot failed", "err", errors.New("exit status 1"), "after", 2*time.Second)
	log.WithGroup("req").Error("bad", slog.Int("id", 7))
	want := "[EVOKORE] Proxy bootstrap complete: 3 proxied tool(s) registered.\n" +
		"[EVOKORE] Background proxy bootstrap failed: boom\n" +
		"WARN boot failed server=github err=\"exit status 1\" after=2s\n" +
		"ERROR bad req.id=7\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}
