// Package filewatch tells when files change on disk, the way editors save
// them: it watches the files' directories, not the files (a rename over a
// file, an atomic save, replaces the inode a file watch is tied to), and
// lets a burst of events settle before it reports (editors save in several
// steps: vim writes a new file and renames it over the old one, others
// truncate and write, some remove and create).
package filewatch

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Debounce is how long a burst of events must be quiet before Watch
// reports it.
const Debounce = 250 * time.Millisecond

// Watch calls changed once when the watch has begun, then once per burst
// of events when one of the files files returns changes, until ctx ends. files is asked at every event,
// so a file that changed its path is followed (its directory is watched
// from the next report on). Problems (a
// directory that cannot be watched) go to log; a file whose directory
// does not exist is watched once it is named again after it appeared.
func Watch(ctx context.Context, files func() []string, changed func(), log *slog.Logger) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		log.Info("[EVOKORE] Cannot watch files for changes; reload with SIGHUP", "err", err)
		return
	}
	defer w.Close()
	dirs := map[string]bool{}
	add := func() {
		for _, f := range files() {
			d := filepath.Dir(Abs(f))
			if dirs[d] {
				continue
			}
			if err := w.Add(d); errors.Is(err, fs.ErrNotExist) {
				// No directory, no file to change: nothing to say.
				log.Debug("[EVOKORE] Not watching a directory that does not exist", "dir", d)
				continue
			} else if err != nil {
				log.Info("[EVOKORE] Cannot watch a directory for changes; reload with SIGHUP", "dir", d, "err", err)
				continue
			}
			dirs[d] = true
		}
	}
	add()
	// A file written after its reader last read it and before the watch
	// began raised no event.
	changed()
	timer := time.NewTimer(Debounce)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			// The files are asked for at each event: they may have
			// changed since the last report (a SIGHUP reload).
			if ev.Op == fsnotify.Chmod || !slices.Contains(absAll(files()), Abs(ev.Name)) {
				continue
			}
			timer.Reset(Debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			log.Info("[EVOKORE] File watcher", "err", err)
		case <-timer.C:
			changed()
			add()
		}
	}
}

func absAll(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = Abs(f)
	}
	return out
}

// Abs is p made absolute, or cleaned when it cannot be.
func Abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
