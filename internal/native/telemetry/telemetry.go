package telemetry

import (
	"context"
	"log/slog"
	"math"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/logging"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/statefile"
)

// Version is the metrics schema version, as EVOKORE-MCP numbered it.
const Version = 2

// FlushDelay is how long after a change the counters are written.
const FlushDelay = time.Second

// Texts the tools answer.
const (
	DisabledText = "Telemetry is disabled. Set EVOKORE_TELEMETRY=true to enable."
	ResetText    = "Telemetry metrics have been reset."
)

// isoMillis is JavaScript's Date.toISOString layout.
const isoMillis = "2006-01-02T15:04:05.000Z"

// Sessions are the session counters.
type Sessions struct {
	ActiveCount  int `json:"activeCount"`
	TotalCreated int `json:"totalCreated"`
	TotalResumed int `json:"totalResumed"`
	TotalExpired int `json:"totalExpired"`
}

// Auth are the authentication counters of the HTTP transport.
type Auth struct {
	SuccessCount     int `json:"successCount"`
	FailureCount     int `json:"failureCount"`
	RateLimitedCount int `json:"rateLimitedCount"`
}

// Metrics is get_telemetry's answer.
type Metrics struct {
	TelemetryVersion int      `json:"telemetryVersion"`
	ToolCallCount    int      `json:"toolCallCount"`
	ToolErrorCount   int      `json:"toolErrorCount"`
	SessionCount     int      `json:"sessionCount"`
	AvgLatencyMs     int64    `json:"avgLatencyMs"`
	StartTime        string   `json:"startTime"`
	Uptime           int64    `json:"uptime"`
	Sessions         Sessions `json:"sessions"`
	Auth             Auth     `json:"auth"`
}

// file is metrics.json: the metrics and the exact latency sums.
type file struct {
	Metrics
	LatencyTotalMs float64 `json:"latencyTotalMs"`
	LatencyCount   int     `json:"latencyCount"`
}

// Manager keeps the counters.
type Manager struct {
	enabled  bool
	path     string
	sessions func() []*session.Session
	log      *slog.Logger

	mu        sync.Mutex
	m         Metrics
	start     time.Time
	latTotal  float64
	latCount  int
	known     map[string]bool // sessions counted as created and not yet expired
	timer     *time.Timer
	closed    bool
	lastError string
}

// Dir is where metrics.json lives: EVOKORE_TELEMETRY_DIR (dir) when set,
// else <home>/telemetry, as in EVOKORE-MCP.
func Dir(dir, home string) string {
	if dir != "" {
		return dir
	}
	return filepath.Join(home, "telemetry")
}

// Register binds the telemetry tools and returns the manager, which is
// also the router.Observer that counts calls. Call Close at shutdown.
// Options are what telemetry uses of the router.
type Options struct {
	// Enabled is EVOKORE_TELEMETRY; Path the metrics file.
	Enabled bool
	Path    string
	// Sessions lists the connected sessions.
	Sessions func() []*session.Session
	Log      *slog.Logger
}

func Register(t *native.Table, o Options) *Manager {
	m := &Manager{
		enabled:  o.Enabled,
		path:     o.Path,
		sessions: o.Sessions,
		log:      o.Log,
		start:    time.Now(),
		known:    map[string]bool{},
	}
	if m.log == nil {
		m.log = logging.Discard()
	}
	if m.enabled {
		m.load()
		m.log.Info("[EVOKORE] Telemetry enabled; metrics are stored locally", "path", m.path)
	}
	t.Bind(native.GetTelemetry, m.getTool)
	t.Bind(native.ResetTelemetry, m.resetTool)
	return m
}

var _ router.Observer = (*Manager)(nil)

// Enabled reports whether counters are kept.
func (m *Manager) Enabled() bool { return m.enabled }

// Observe counts one dispatched call.
func (m *Manager) Observe(_ context.Context, o router.Outcome) {
	if !m.enabled || o.Refused {
		return
	}
	c := o.Call
	ms := float64(time.Since(c.Started).Microseconds()) / 1000
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m.ToolCallCount++
	if ms >= 0 {
		m.latTotal += ms
		m.latCount++
	}
	if o.Err != nil || (o.Result != nil && o.Result.IsError) {
		m.m.ToolErrorCount++
	}
	if c.Session != nil && !m.known[c.Session.ID] {
		m.known[c.Session.ID] = true
		m.m.SessionCount++
		m.m.Sessions.TotalCreated++
	}
	m.reconcileLocked()
	m.scheduleLocked()
}

// Snapshot returns the counters now.
func (m *Manager) Snapshot() Metrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reconcileLocked()
	return m.snapshotLocked()
}

// Reset zeroes the counters and writes them at once.
func (m *Manager) Reset() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m = Metrics{}
	m.start = time.Now()
	m.latTotal, m.latCount = 0, 0
	// Sessions still connected are not created again.
	m.reconcileLocked()
	return m.flushLocked()
}

// Close writes the counters one last time.
func (m *Manager) Close() {
	if !m.enabled {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	if m.timer != nil {
		m.timer.Stop()
	}
	m.reconcileLocked()
	if err := m.flushLocked(); err != nil {
		m.log.Info("[EVOKORE] Failed to flush telemetry metrics", "err", err)
	}
}

func (m *Manager) getTool(context.Context, *native.Call) (*mcp.CallToolResult, error) {
	if !m.enabled {
		return native.Text("%s", DisabledText), nil
	}
	return native.JSON(m.Snapshot()), nil
}

func (m *Manager) resetTool(context.Context, *native.Call) (*mcp.CallToolResult, error) {
	if !m.enabled {
		return native.Text("%s", DisabledText), nil
	}
	if err := m.Reset(); err != nil {
		return native.Errorf("Telemetry metrics were reset in memory but could not be written: %v", err), nil
	}
	return native.Text("%s", ResetText), nil
}

// reconcileLocked counts sessions that connected or went away since the
// last look.
func (m *Manager) reconcileLocked() {
	if m.sessions == nil {
		return
	}
	live := map[string]bool{}
	for _, s := range m.sessions() {
		live[s.ID] = true
		if !m.known[s.ID] {
			m.known[s.ID] = true
			m.m.SessionCount++
			m.m.Sessions.TotalCreated++
		}
	}
	for id := range m.known {
		if !live[id] {
			delete(m.known, id)
			m.m.Sessions.TotalExpired++
		}
	}
	m.m.Sessions.ActiveCount = len(live)
}

func (m *Manager) snapshotLocked() Metrics {
	out := m.m
	out.TelemetryVersion = Version
	out.StartTime = m.start.UTC().Format(isoMillis)
	out.Uptime = time.Since(m.start).Milliseconds()
	if m.latCount > 0 {
		out.AvgLatencyMs = int64(math.Round(m.latTotal / float64(m.latCount)))
	}
	return out
}

func (m *Manager) scheduleLocked() {
	if m.closed {
		return
	}
	if m.timer == nil {
		m.timer = time.AfterFunc(FlushDelay, m.flushNow)
		return
	}
	m.timer.Reset(FlushDelay)
}

func (m *Manager) flushNow() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.reconcileLocked()
	if err := m.flushLocked(); err != nil && err.Error() != m.lastError {
		m.lastError = err.Error()
		m.log.Info("[EVOKORE] Failed to flush telemetry metrics", "err", err)
	}
}

func (m *Manager) flushLocked() error {
	return statefile.WriteJSON(m.path, file{Metrics: m.snapshotLocked(), LatencyTotalMs: m.latTotal, LatencyCount: m.latCount}, 0o600)
}

// load restores the counters written by an earlier run (or by
// EVOKORE-MCP); activeCount is always live, never loaded.
func (m *Manager) load() {
	var f file
	ok, err := statefile.ReadJSON(m.path, &f)
	if err != nil {
		m.log.Info("[EVOKORE] Failed to load telemetry metrics", "err", err)
		return
	}
	if !ok {
		return
	}
	m.m.ToolCallCount = f.ToolCallCount
	m.m.ToolErrorCount = f.ToolErrorCount
	m.m.SessionCount = f.SessionCount
	m.m.Sessions.TotalCreated = f.Sessions.TotalCreated
	m.m.Sessions.TotalResumed = f.Sessions.TotalResumed
	m.m.Sessions.TotalExpired = f.Sessions.TotalExpired
	m.m.Auth = f.Auth
	if t, err := time.Parse(time.RFC3339Nano, f.StartTime); err == nil {
		m.start = t
	}
	switch {
	case f.LatencyCount > 0:
		m.latTotal, m.latCount = f.LatencyTotalMs, f.LatencyCount
	case f.AvgLatencyMs > 0 && f.ToolCallCount > 0:
		// Files without the sums: rebuild them from the mean.
		m.latTotal, m.latCount = float64(f.AvgLatencyMs)*float64(f.ToolCallCount), f.ToolCallCount
	}
}
