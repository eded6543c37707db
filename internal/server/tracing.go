package server

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/router"
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

// tracedProxy is the child supervisor with each upstream call in its own
// span; the supervisor's other methods (Resolve) pass through.
type tracedProxy struct {
	*proxy.Supervisor
	tel *tracing.Exporter
}

func (p tracedProxy) CallTool(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	return p.tel.Upstream(ctx, c, func(ctx context.Context) (*mcp.CallToolResult, error) { return p.Supervisor.CallTool(ctx, c) })
}
