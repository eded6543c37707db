package analytics

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/session"
)

// Manager reads the session records of one EVOKORE_HOME and one user's
// Claude Code projects.
type Manager struct {
	sessions string
	projects string
	// defaultSession is EVOKORE_SESSION_ID, or "default".
	defaultSession string
	// Now is the clock; tests may replace it.
	Now func() time.Time
}

// Register binds the four session analytics tools.
//
// evokoreHome holds the hook and router session records; env gives HOME
// (Claude Code's transcripts) and EVOKORE_SESSION_ID.
func Register(t *native.Table, evokoreHome string, env config.Env) *Manager {
	home := env.Get("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	m := &Manager{
		sessions:       filepath.Join(evokoreHome, "sessions"),
		projects:       filepath.Join(home, ".claude", "projects"),
		defaultSession: env.Get("EVOKORE_SESSION_ID"),
		Now:            time.Now,
	}
	if m.defaultSession == "" {
		m.defaultSession = "default"
	}
	t.Bind(native.SessionContextHealth, m.healthTool)
	t.Bind(native.SessionAnalyzeReplay, m.replayTool)
	t.Bind(native.SessionWorkRatio, m.workTool)
	t.Bind(native.SessionTrustReport, m.trustTool)
	return m
}

func (m *Manager) healthTool(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		SessionPath string `json:"session_path"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	// Claude Code's transcripts are the records of the machine's own
	// user, whose tenant is "": another tenant sees none of them, and
	// learns nothing of which exist.
	if !session.IdentityOf(call.Session).MaySee("") {
		return native.Errorf("Session transcripts are not available to this caller."), nil
	}
	path := in.SessionPath
	if path == "" {
		p, ok := newestTranscript(m.projects)
		if !ok {
			return native.Errorf("No session file found under %s. Pass session_path, or start a Claude Code session first.", m.projects), nil
		}
		path = p
	}
	// Only the user's transcripts are read: a path the model names
	// elsewhere (or a link that leads out) is answered like a missing
	// file, so the tool tells nothing of what exists outside.
	unavailable := native.Errorf("Session file not found or not readable: %s", path)
	real, err := safefile.Scope{Roots: []string{m.projects}}.Resolve(path)
	if err != nil {
		return unavailable, nil
	}
	f, err := openFile(real)
	if err != nil {
		return unavailable, nil
	}
	defer f.Close()
	h, err := readHealth(ctx, f, path)
	var tl *safefile.TooLargeError
	switch {
	case errors.Is(err, errNoUsage):
		return native.Errorf("No usage data found in session file: %s. It may be empty or not a Claude Code transcript.", path), nil
	case errors.As(err, &tl):
		return native.Errorf("Cannot read %s: the file is larger than %d MiB", path, maxFileBytes>>20), nil
	case err != nil:
		return native.Errorf("Cannot read %s: %v", path, err), nil
	}
	return native.JSON(h), nil
}

func (m *Manager) replayTool(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		ProjectFilter string `json:"project_filter"`
		DaysBack      int    `json:"days_back"`
		MinToolCalls  int    `json:"min_tool_calls"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	return native.JSON(analyzeReplay(ctx, m.sessionsOf(call), in.ProjectFilter, in.DaysBack, in.MinToolCalls, m.Now())), nil
}

func (m *Manager) workTool(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		ProjectFilter string  `json:"project_filter"`
		DaysBack      int     `json:"days_back"`
		ThresholdPct  float64 `json:"threshold_pct"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	return native.JSON(workRatio(ctx, m.sessionsOf(call), in.ProjectFilter, in.DaysBack, in.ThresholdPct, m.Now())), nil
}

func (m *Manager) trustTool(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		SessionID string `json:"session_id"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	id := in.SessionID
	if id == "" {
		id = m.defaultSession
	}
	path := filepath.Join(m.sessionsOf(call), safeID(id)+"-trust.json")
	r, err := readTrust(ctx, path, id)
	if err != nil {
		return native.Errorf("Cannot read the trust ledger %s: %v", path, err), nil
	}
	return native.JSON(r), nil
}

// sessionsOf is the session records the caller's tenant may read: its own
// folder of EVOKORE_HOME/sessions (session.TenantDir).
func (m *Manager) sessionsOf(call *native.Call) string {
	return session.TenantDir(m.sessions, session.TenantOf(call.Session))
}
