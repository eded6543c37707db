package workers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/statefile"
)

// Types are the worker types, in the order messages list them.
var Types = []string{"test_run", "repo_analysis", "security_scan", "benchmark"}

// Statuses.
const (
	StatusPending  = "pending"
	StatusRunning  = "running"
	StatusComplete = "complete"
	StatusError    = "error"
)

// isoMillis is JavaScript's Date.toISOString layout.
const isoMillis = "2006-01-02T15:04:05.000Z"

// State is a worker's persisted state.
type State struct {
	WorkerID     string          `json:"workerId"`
	WorkerScript string          `json:"workerScript"`
	Status       string          `json:"status"`
	StartedAt    string          `json:"startedAt"`
	CompletedAt  string          `json:"completedAt,omitempty"`
	Result       json.RawMessage `json:"result,omitempty"`
	Error        string          `json:"error,omitempty"`
	Options      map[string]any  `json:"options"`
	OwnerPID     int             `json:"ownerPid,omitempty"`
}

// job is what a worker does; it returns the result to record.
type job func(ctx context.Context) (any, error)

// Manager runs workers and keeps their state.
type Manager struct {
	dir string
	env config.Env
	cwd string

	mu      sync.Mutex
	cancels map[string]context.CancelFunc
	closed  bool
	wg      sync.WaitGroup
}

// New keeps state under dir; commands get env, and relative paths resolve
// against cwd.
func New(dir string, env config.Env, cwd string) *Manager {
	return &Manager{dir: dir, env: env, cwd: cwd, cancels: map[string]context.CancelFunc{}}
}

var unsafeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]`) })

// sessionDir is where a session's workers live, in its tenant's folder
// (session.TenantDir); the id is reduced to [A-Za-z0-9_-] as
// EVOKORE-MCP's hooks do.
func (m *Manager) sessionDir(tenant, sessionID string) string {
	return filepath.Join(session.TenantDir(m.dir, tenant), unsafeChars().ReplaceAllString(sessionID, "_"))
}

var workerIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`) })

// path is the state file of a worker; ok is false for an id that cannot
// name one (which also keeps ids from walking out of the directory).
func (m *Manager) path(tenant, sessionID, workerID string) (string, bool) {
	if !workerIDRE().MatchString(workerID) {
		return "", false
	}
	return filepath.Join(m.sessionDir(tenant, sessionID), workerID+".json"), true
}

func newWorkerID(workerType string) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", workerType, time.Now().UnixMilli(), hex.EncodeToString(b[:]))
}

func now() string { return time.Now().UTC().Format(isoMillis) }

// start records a pending worker and runs fn in the background.
func (m *Manager) start(tenant, sessionID, workerType string, options map[string]any, fn job) (string, error) {
	id := newWorkerID(workerType)
	path, _ := m.path(tenant, sessionID, id)
	if options == nil {
		options = map[string]any{}
	}
	st := State{WorkerID: id, WorkerScript: workerType, Status: StatusPending, StartedAt: now(), Options: options, OwnerPID: os.Getpid()}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", errors.New("the router is shutting down")
	}
	if err := statefile.WriteJSON(path, st, 0o600); err != nil {
		return "", err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cancels[id] = cancel
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer func() {
			m.mu.Lock()
			delete(m.cancels, id)
			m.mu.Unlock()
			cancel()
		}()
		st.Status = StatusRunning
		_ = statefile.WriteJSON(path, st, 0o600)
		result, err := fn(ctx)
		st.CompletedAt = now()
		if result != nil {
			st.Result, _ = json.Marshal(result)
		}
		switch {
		case ctx.Err() != nil:
			st.Status, st.Error = StatusError, "cancelled: the router shut down"
		case err != nil:
			st.Status, st.Error = StatusError, err.Error()
		default:
			st.Status = StatusComplete
		}
		_ = statefile.WriteJSON(path, st, 0o600)
	}()
	return id, nil
}

// Read returns a worker's state; ok is false when there is none. A state a
// dead router left unfinished is rewritten as interrupted.
func (m *Manager) Read(tenant, sessionID, workerID string) (State, bool, error) {
	path, ok := m.path(tenant, sessionID, workerID)
	if !ok {
		return State{}, false, nil
	}
	var st State
	found, err := statefile.ReadJSON(path, &st)
	if !found || err != nil {
		return State{}, found, err
	}
	if (st.Status == StatusPending || st.Status == StatusRunning) && st.OwnerPID != os.Getpid() &&
		st.OwnerPID > 0 && !procgroup.Alive(st.OwnerPID) {
		st.Status, st.CompletedAt = StatusError, now()
		st.Error = fmt.Sprintf("interrupted: the router that ran it (pid %d) exited before it finished", st.OwnerPID)
		_ = statefile.WriteJSON(path, st, 0o600)
	}
	return st, true, nil
}

// Close cancels running workers and waits for them to record it.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	for _, cancel := range m.cancels {
		cancel()
	}
	m.mu.Unlock()
	m.wg.Wait()
}
