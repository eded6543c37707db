package server

import (
	"context"
	"path/filepath"

	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/native/analytics"
	"github.com/evokore/evokore/internal/native/claims"
	"github.com/evokore/evokore/internal/native/codemode"
	"github.com/evokore/evokore/internal/native/fleet"
	"github.com/evokore/evokore/internal/native/memory"
	"github.com/evokore/evokore/internal/native/nav"
	"github.com/evokore/evokore/internal/native/orchestration"
	"github.com/evokore/evokore/internal/native/plugins"
	"github.com/evokore/evokore/internal/native/skilltools"
	"github.com/evokore/evokore/internal/native/telemetry"
	"github.com/evokore/evokore/internal/native/workers"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/resources"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/skills"
)

// contributions are what managers add beyond their tool handlers.
type contributions struct {
	// Content serves resources and prompts; nil serves none.
	Content Content
	// Plugins runs plugin tools.
	Plugins router.Dispatcher
	// Observers see every dispatched call (telemetry).
	Observers []router.Observer
	// Starters begin background work at Start: plugins publish the
	// tools they loaded.
	Starters []func(ctx context.Context)
	// AfterHandshake begin background work once the first session's
	// first request is answered (the skills index and its watcher): it
	// takes milliseconds of CPU that the handshake must not wait behind.
	// Whatever needs the work first starts it itself (Library.Index).
	AfterHandshake []func()
	// Binders add to the approval binding of a tool what must not change
	// between approval and run (execute_skill: the step's code).
	Binders map[string]policy.Binder
	// Closers stop background work (workers, fleet agents) at shutdown;
	// they run in reverse order.
	Closers []func()
	// Skills is the skill library, which the Skills Extension serves.
	Skills *skills.Library
}

// registerManagers binds every native manager's handlers. Each manager is
// a line or two here and receives only the settings it uses; the router
// core never names a manager. Nothing starts here: what runs in the
// background is returned as starters.
func registerManagers(t *native.Table, host *native.Host, s *Server) contributions {
	var c contributions
	set := s.opts.Settings
	plugged := plugins.Register(t, set.PluginsDir, set.Env, host)
	c.Plugins = plugged
	c.Starters = append(c.Starters, func(context.Context) { plugged.Start() })
	counters := telemetry.Register(t, telemetry.Options{Enabled: s.settings.Natives.Telemetry,
		Path: filepath.Join(telemetry.Dir(set.TelemetryDir, set.Home), "metrics.json"), Sessions: host.Sessions, Log: host.Log})
	c.Observers = append(c.Observers, counters)
	locks := claims.Register(t, filepath.Join(set.Home, ".claims"))
	memory.Register(t, filepath.Join(set.Home, "memory"), host.Log)
	// EVOKORE_HOME is out even inside the project: it holds other
	// tenants' records and the shared stores.
	nav.Register(t, safefile.Scope{Roots: []string{set.ProjectDir}, Excluded: []string{set.Home}})
	analytics.Register(t, set.Home, set.Env)
	background := workers.Register(t, filepath.Join(set.Home, "workers"), set.Env)
	agents := fleet.Register(t, set.Env)
	runs := orchestration.Register(t, agents, locks)
	// Closers run in reverse: runs release their claims before the fleet
	// kills what is left.
	c.Closers = append(c.Closers, counters.Close, background.Close, agents.Close, runs.Close)
	library := skilltools.Register(t, host, skilltools.Options{Dir: set.SkillsDir, Watch: s.settings.Natives.SkillWatcher, Home: set.Home,
		Env: set.Env, AllowPrivate: s.settings.Natives.HTTPAllowPrivate, DiscoveryMode: s.settings.Catalog.Discovery.Mode,
		Visible: s.skillAllowed})
	c.AfterHandshake = append(c.AfterHandshake, library.Start)
	c.Binders = map[string]policy.Binder{native.ExecuteSkill.String(): library.Tools.StepBinding}
	c.Content = resources.New(resources.Options{Library: library.Library, Status: s.Status, Snapshot: s.Snapshot, Config: host.Config,
		DiscoveryMode: s.settings.Catalog.Discovery.Mode, Name: serverName, Version: s.opts.Version,
		Problems: s.Problems, Plugins: plugged, Semantic: host.Semantic.Status})
	c.Closers = append(c.Closers, library.Close)
	c.Skills = library.Library
	codemode.Register(t, host, codemode.Options{Limits: s.settings.Natives.Code, NativeTimeout: set.Children.Request, Command: s.opts.CodeSandbox})
	return c
}
