package server

import (
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/native/analytics"
	"github.com/evokore/evokore/internal/native/claims"
	"github.com/evokore/evokore/internal/native/fleet"
	"github.com/evokore/evokore/internal/native/memory"
	"github.com/evokore/evokore/internal/native/nav"
	"github.com/evokore/evokore/internal/native/orchestration"
	"github.com/evokore/evokore/internal/native/plugins"
	"github.com/evokore/evokore/internal/native/skilltools"
	"github.com/evokore/evokore/internal/native/telemetry"
	"github.com/evokore/evokore/internal/native/workers"
	"github.com/evokore/evokore/internal/resources"
	"github.com/evokore/evokore/internal/router"
)

// contributions are what managers add beyond their tool handlers.
type contributions struct {
	// Content serves resources and prompts; nil serves none.
	Content Content
	// Plugins runs plugin tools.
	Plugins router.Dispatcher
	// Observers see every dispatched call (telemetry).
	Observers []router.Observer
	// Closers stop background work (workers, fleet agents) at shutdown.
	Closers []func()
	// Ready run once the catalog exists (host.Catalog is set), before any
	// session connects: plugins publish the tools they loaded at start.
	Ready []func()
}

// registerManagers binds every native manager's handlers. Each manager is
// a line or two here; the router core never names a manager. host.Catalog
// is set once the catalog exists, before any call can run.
func registerManagers(t *native.Table, host *native.Host, s *Server) contributions {
	var c contributions
	plugged := plugins.Register(t, host)
	c.Plugins = plugged
	c.Ready = append(c.Ready, plugged.Start)
	counters := telemetry.Register(t, host)
	c.Observers = append(c.Observers, counters)
	locks := claims.Register(t, host)
	memory.Register(t, host)
	nav.Register(t)
	analytics.Register(t, host)
	background := workers.Register(t, host)
	agents := fleet.Register(t, host)
	runs := orchestration.Register(t, agents, locks)
	// Runs release their claims before the fleet kills what is left.
	c.Closers = append(c.Closers, runs.Close, agents.Close, background.Close, counters.Close)
	library := skilltools.Register(t, host)
	c.Content = resources.New(resources.Options{Library: library, Status: s.Status, Snapshot: s.Snapshot, Config: host.Config,
		DiscoveryMode: host.Settings.DiscoveryMode, Name: serverName, Version: s.opts.Version, Semantic: host.Semantic.Status})
	c.Closers = append(c.Closers, library.Close)
	return c
}
