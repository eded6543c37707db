package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	starter "github.com/evokore/evokore/SKILLS"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/logging"
)

// EmbeddedLabel names the starter library in messages.
const EmbeddedLabel = "built-in:SKILLS"

// Library is a skill library: the current index snapshot, swapped whole on
// refresh, and the watcher that refreshes it.
type Library struct {
	dir string
	log *slog.Logger

	cur atomic.Pointer[Index]
	// local is the library's own index; cur is it with the children's
	// skills (SetRemote) added.
	local     atomic.Pointer[Index]
	remote    atomic.Pointer[[]*Skill]
	refreshMu sync.Mutex
	// ready is closed once the first index is built.
	ready     chan struct{}
	startOnce sync.Once
	building  sync.WaitGroup

	mu      sync.Mutex
	changed chan struct{}
	watch   *watcher
	closed  bool
}

// New prepares the library in dir, or the embedded starter library when
// dir does not exist. It starts nothing: Start builds the first index in
// the background, so a router answers the client's handshake without
// waiting for it; Index waits for it (and starts it if nobody did).
// Problems are logged to log; nothing is fatal.
func New(dir string, log *slog.Logger) *Library {
	if log == nil {
		log = logging.Discard()
	}
	return &Library{dir: dir, log: log, changed: make(chan struct{}), ready: make(chan struct{})}
}

// Open is New followed by Start.
func Open(dir string, log *slog.Logger) *Library {
	l := New(dir, log)
	l.Start()
	return l
}

// Start builds the first index in the background; Close joins it. Only
// the first call does anything.
func (l *Library) Start() {
	l.startOnce.Do(func() {
		l.building.Add(1)
		go func() {
			defer l.building.Done()
			ix := Build(l.source())
			l.publish(ix)
			close(l.ready)
			if ix.Source.Dir == "" {
				l.log.Info("[EVOKORE] Skills directory not found; serving the built-in starter library", "dir", l.dir, "skills", ix.Len())
			} else {
				l.log.Info("[EVOKORE] Indexed the skills", "skills", ix.Len(), "dir", l.dir, "took", ix.Took.Round(time.Millisecond))
			}
			l.report(ix)
		}()
	})
}

// Dir is the configured skills directory (it may not exist).
func (l *Library) Dir() string { return l.dir }

// Index returns the current snapshot, waiting for the first one.
func (l *Library) Index() *Index {
	l.Start()
	<-l.ready
	return l.cur.Load()
}

// Changed is closed the next time a refresh publishes a new index.
func (l *Library) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// source is the directory when it exists, else the starter library.
func (l *Library) source() Source {
	if st, err := os.Stat(l.dir); err == nil && st.IsDir() {
		return Source{FS: os.DirFS(l.dir), Dir: l.dir, Label: l.dir}
	}
	return Source{FS: starter.FS, Label: EmbeddedLabel}
}

// Refreshed reports what a refresh changed.
type Refreshed struct {
	Added, Removed, Total int
	// Kept is Total minus Added: skills that were there before, changed
	// or not.
	Kept  int
	Took  time.Duration
	Index *Index
}

// Refresh re-indexes the library and publishes the new snapshot.
func (l *Library) Refresh() Refreshed {
	l.refreshMu.Lock()
	defer l.refreshMu.Unlock()
	start := time.Now()
	old := l.Index()
	ix := l.publish(Build(l.source()))
	r := Refreshed{Total: ix.Len(), Took: time.Since(start), Index: ix}
	for _, s := range ix.Skills {
		if old.byKey[s.Key] == nil {
			r.Added++
		}
	}
	for _, s := range old.Skills {
		if ix.byKey[s.Key] == nil {
			r.Removed++
		}
	}
	r.Kept = r.Total - r.Added
	if old.Source.Dir != ix.Source.Dir {
		if ix.Source.Dir == "" {
			l.log.Info("[EVOKORE] Skills directory is gone; serving the built-in starter library", "dir", l.dir)
		} else {
			l.log.Info("[EVOKORE] Skills directory appeared; serving it instead of the built-in library", "dir", l.dir)
		}
	}
	l.report(ix)
	l.mu.Lock()
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
	return r
}

// report logs the index's problems, one line each.
func (l *Library) report(ix *Index) {
	for _, d := range ix.Diagnostics {
		// A diagnostic keeps its file:line:col form, which editors read.
		l.log.Info("[EVOKORE] skills: " + d.String())
	}
}

// Writable returns the directory new skills are written to, or an error
// that says why there is none: while the directory is missing the
// built-in library is served, and writing a first skill there would hide
// every starter skill.
func (l *Library) Writable() (string, error) {
	st, err := os.Stat(l.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("the skills directory %s does not exist, so the built-in starter library is being served; "+
			"create the directory (or set EVOKORE_SKILLS_DIR to an existing one) before adding skills", l.dir)
	case err != nil:
		return "", err
	case !st.IsDir():
		return "", fmt.Errorf("the skills path %s is not a directory", l.dir)
	}
	return l.dir, nil
}

// Close stops the watcher and waits for an index build in progress.
func (l *Library) Close() {
	l.mu.Lock()
	w := l.watch
	l.watch, l.closed = nil, true
	l.mu.Unlock()
	if w != nil {
		w.stop()
	}
	l.building.Wait()
}

// Diagnostics are the current index's problems plus its dependency
// problems.
func (l *Library) Diagnostics() config.Diagnostics {
	ix := l.Index()
	ds := append(config.Diagnostics{}, ix.Diagnostics...)
	ds = append(ds, ix.AllProblems()...)
	ds.Sort()
	return ds
}

// publish makes local the library's index, with the children's skills
// added when there are any, and returns what it published.
func (l *Library) publish(local *Index) *Index {
	l.local.Store(local)
	ix := local
	if r := l.remote.Load(); r != nil && len(*r) > 0 {
		ix = local.withRemote(*r)
	}
	l.cur.Store(ix)
	return ix
}

// SetRemote replaces the children's skills searched with the library's
// (RemoteSkill).
func (l *Library) SetRemote(list []*Skill) {
	l.Start()
	<-l.ready
	l.refreshMu.Lock()
	defer l.refreshMu.Unlock()
	l.remote.Store(&list)
	l.publish(l.local.Load())
}
