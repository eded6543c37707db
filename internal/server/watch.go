package server

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// reloadDebounce is how long the file watcher waits for a burst of events
// to settle before it reloads. Editors save in several steps (vim writes
// a new file and renames it over the old one, others truncate and write,
// some remove and create): reloading on the first event would read half
// a file, or none.
const reloadDebounce = 250 * time.Millisecond

// watchFiles reloads the configuration when mcp.config.json or
// permissions.yml changes on disk, until ctx ends. It watches the files'
// directories, not the files: a rename over the file (an atomic save)
// replaces the inode a file watch would be tied to. An event that leaves
// both files' content as it is serving (a touch, a save without change)
// does not reload.
func (s *Server) watchFiles(ctx context.Context) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.log.Info("[EVOKORE] Cannot watch the configuration files; reload with SIGHUP: " + err.Error())
		return
	}
	defer w.Close()
	dirs := map[string]bool{}
	// watch adds the directories of the files in force; a reload that
	// settles another permissions.yml (trust changed) adds its directory.
	watch := func() {
		g := s.gen.Load()
		for _, f := range []string{g.settings.ConfigPath, g.settings.PermissionsPath} {
			d := filepath.Dir(absPath(f))
			if dirs[d] {
				continue
			}
			err := w.Add(d)
			if errors.Is(err, fs.ErrNotExist) && d == absPath(g.settings.Home) {
				// A fresh EVOKORE_HOME: the router writes there anyway,
				// and a config created in it later is then seen.
				if os.MkdirAll(d, 0o700) == nil {
					err = w.Add(d)
				}
			}
			if errors.Is(err, fs.ErrNotExist) {
				// No directory, no file to change: nothing to say.
				s.log.Debug("[EVOKORE] Not watching a directory that does not exist", "dir", d)
				continue
			}
			if err != nil {
				s.log.Info("[EVOKORE] Cannot watch " + d + " for configuration changes; reload with SIGHUP: " + err.Error())
				continue
			}
			dirs[d] = true
		}
	}
	watch()
	// A file written after the router read it and before the watch began
	// (a config created in a fresh EVOKORE_HOME) raised no event.
	s.reloadIfChanged()
	timer := time.NewTimer(reloadDebounce)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod || !s.watched(ev.Name) {
				continue
			}
			timer.Reset(reloadDebounce)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			s.log.Info("[EVOKORE] Configuration watcher: " + err.Error())
		case <-timer.C:
			s.reloadIfChanged()
			watch()
		}
	}
}

// watched reports whether path is one of the configuration files in
// force.
func (s *Server) watched(path string) bool {
	g := s.gen.Load()
	p := absPath(path)
	return p == absPath(g.settings.ConfigPath) || p == absPath(g.settings.PermissionsPath)
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

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
