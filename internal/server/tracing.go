package server

import (
	"context"
	"time"

	"github.com/evokore/evokore/internal/tracing"
)

// exportGrace is how long shutdown waits for the last spans to export.
const exportGrace = 2 * time.Second

// openTracing starts OpenTelemetry export when an OTLP endpoint is set.
func (s *Server) openTracing() {
	tel, err := tracing.New(tracing.Options{Version: s.opts.Version, Log: s.log})
	if err != nil {
		s.log.Info("[EVOKORE] OpenTelemetry export is off", "err", err)
	}
	if tel == nil {
		return
	}
	s.tracing = tel
	s.parts.OnStop(func() {
		ctx, cancel := context.WithTimeout(context.Background(), exportGrace)
		defer cancel()
		if err := tel.Shutdown(ctx); err != nil {
			s.log.Info("[EVOKORE] OpenTelemetry export at shutdown failed", "err", s.records.Scrub(err.Error()))
		}
	})
}
