package server

import (
	"log/slog"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/router"
)

// OpenRecords opens the records a router with set and cfg would (audit
// log, session replay, webhooks) and returns its recorders, for
// benchmarks that drive them without a router; closeAll drains their
// writers and stops them.
func OpenRecords(set config.Settings, cfg *config.MCPConfig) (recorders []router.Observer, closeAll func()) {
	s := &Server{opts: Options{Settings: set}, log: slog.New(slog.DiscardHandler)}
	s.openRecords(cfg)
	return s.records.recorders(s), func() {
		for i := len(s.closers) - 1; i >= 0; i-- {
			s.closers[i]()
		}
	}
}
