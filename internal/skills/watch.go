package skills

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long the watcher waits for a burst of file events
// to settle before it re-indexes.
const DefaultDebounce = time.Second

// watcher re-indexes a library when its files change. fsnotify is not
// recursive, so every directory is watched on its own and directories
// that appear are added as they are created.
type watcher struct {
	fs   *fsnotify.Watcher
	done chan struct{}
	wg   sync.WaitGroup
}

// Watch starts re-indexing the library debounce after its files stop
// changing; each re-index closes Changed. Watching twice is a no-op. It
// fails when the library is the embedded one: there is nothing to watch.
func (l *Library) Watch(debounce time.Duration) error {
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.watch != nil || l.closed {
		return nil
	}
	if st, err := os.Stat(l.dir); err != nil || !st.IsDir() {
		return fmt.Errorf("skills directory %s does not exist; the skill watcher is off", l.dir)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("start the skill watcher: %w", err)
	}
	w := &watcher{fs: fw, done: make(chan struct{})}
	w.addTree(l, l.dir)
	l.watch = w
	w.wg.Go(func() { w.loop(l, debounce) })
	l.log.Info("[EVOKORE] Skill watcher started", "dir", l.dir, "debounce", debounce)
	return nil
}

// addTree watches dir and every directory below it that the indexer
// would walk.
func (w *watcher) addTree(l *Library, dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // vanished while walking: the next event will tell
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if err := w.fs.Add(p); err != nil {
			l.log.Info("[EVOKORE] Skill watcher cannot watch a directory", "dir", p, "err", err)
		}
		return nil
	})
}

func (w *watcher) loop(l *Library, debounce time.Duration) {
	timer := time.NewTimer(debounce)
	timer.Stop()
	pending := false
	for {
		select {
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Lstat(ev.Name); err == nil && st.IsDir() {
					w.addTree(l, ev.Name)
				}
			}
			timer.Reset(debounce)
			pending = true
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			l.log.Info("[EVOKORE] Skill watcher failed", "err", err)
		case <-timer.C:
			if pending {
				pending = false
				r := l.Refresh()
				l.log.Info("[EVOKORE] Skills re-indexed after a change", "added", r.Added, "removed", r.Removed, "total", r.Total)
			}
		case <-w.done:
			return
		}
	}
}

func (w *watcher) stop() {
	close(w.done)
	_ = w.fs.Close()
	w.wg.Wait()
}
