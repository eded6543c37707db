package server

import (
	"context"
	"os"
	"path/filepath"

	"github.com/evokore/evokore/internal/filewatch"
)

// watchFiles reloads the configuration when mcp.config.json or
// permissions.yml changes on disk, until ctx ends. An event that leaves
// both files' content as it is serving (a touch, a save without change)
// does not reload.
func (s *Server) watchFiles(ctx context.Context) {
	files := func() []string {
		g := s.gen.Load()
		return []string{g.settings.ConfigPath, g.settings.PermissionsPath}
	}
	// A fresh EVOKORE_HOME holding the config: the router writes there
	// anyway, and a config created in it later is then seen.
	home := filewatch.Abs(s.opts.Settings.Home)
	for _, f := range files() {
		if filepath.Dir(filewatch.Abs(f)) == home {
			_ = os.MkdirAll(home, 0o700)
		}
	}
	filewatch.Watch(ctx, files, s.reloadIfChanged, s.log)
}

// reloadIfChanged reloads unless both files hold what is serving. Back to
// what is serving after a refused reload (the edit was undone), the
// refusal is forgotten.
func (s *Server) reloadIfChanged() {
	g := s.gen.Load()
	if fileSum(g.settings.ConfigPath) == g.configSum && fileSum(g.settings.PermissionsPath) == g.permsSum {
		if s.refused.Swap(nil) != nil {
			s.log.Info("[EVOKORE] The configuration files are back to the configuration in force; the refused reload is cleared.")
		}
		return
	}
	_, _ = s.Reload() // Reload reports on stderr either way
}
