package hooks

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/evokore/evokore/internal/replay"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/statefile"
)

// Manifest event types (EVOKORE-MCP's ADR 0001), plus the snapshot line
// compaction leaves.
const (
	EvSessionInitialized = "session_initialized"
	EvPurposeRecorded    = "purpose_recorded"
	EvPurposeReminder    = "purpose_reminder"
	EvToolInvoked        = "tool_invoked"
	EvEvidenceCaptured   = "evidence_captured"
	EvTaskAction         = "task_action"
	EvStopCheck          = "stop_check"
	EvSubagentTracked    = "subagent_tracked"
	EvPreCompact         = "pre_compact"
	EvSnapshot           = "__snapshot__"
)

// ManifestMaxBytes is the size above which the manifest is compacted to
// one snapshot line.
const ManifestMaxBytes = 1 << 20

// maxManifestLine bounds one manifest line a fold reads.
const maxManifestLine = 1 << 20

// Event is one manifest line.
type Event struct {
	SchemaVersion int             `json:"schemaVersion"`
	TS            string          `json:"ts"`
	SessionID     string          `json:"sessionId"`
	Type          string          `json:"type"`
	Payload       json.RawMessage `json:"payload"`
}

// Subagent is one Task call the session made.
type Subagent struct {
	ID          string `json:"id"`
	Description string `json:"description,omitempty"`
	Type        string `json:"subagentType,omitempty"`
	TS          string `json:"ts"`
	IsError     bool   `json:"isError,omitempty"`
}

// State is the manifest folded left to right: what the session is and
// has done. It is also the legacy snapshot <sid>.json.
type State struct {
	SessionID         string         `json:"sessionId"`
	CreatedAt         string         `json:"createdAt,omitempty"`
	LastActivity      string         `json:"lastActivity,omitempty"`
	Status            string         `json:"status,omitempty"`
	WorkspaceRoot     string         `json:"workspaceRoot,omitempty"`
	CanonicalRepoRoot string         `json:"canonicalRepoRoot,omitempty"`
	RepoName          string         `json:"repoName,omitempty"`
	Purpose           string         `json:"purpose,omitempty"`
	Mode              string         `json:"mode,omitempty"`
	PromptCount       int            `json:"promptCount"`
	ToolCount         int            `json:"toolCount"`
	EvidenceCount     int            `json:"evidenceCount"`
	LastTool          string         `json:"lastTool,omitempty"`
	LastEditedFile    string         `json:"lastEditedFile,omitempty"`
	Subagents         []Subagent     `json:"subagents,omitempty"`
	PreCompact        map[string]any `json:"preCompactSnapshot,omitempty"`
	LastStopCheck     map[string]any `json:"lastStopCheck,omitempty"`
	Reminders         int            `json:"reminders,omitempty"`
}

// ManifestPath is sessions/<sid>.jsonl under home.
func ManifestPath(home, sid string) string { return replay.SessionFile(home, sid, ".jsonl") }

// apply folds one event into s. Unknown types only touch lastActivity.
func (s *State) apply(e Event) {
	if e.TS != "" {
		s.LastActivity = e.TS
		if s.CreatedAt == "" {
			s.CreatedAt = e.TS
		}
	}
	var p map[string]any
	_ = json.Unmarshal(e.Payload, &p)
	str := func(k string) string { v, _ := p[k].(string); return v }
	switch e.Type {
	case EvSnapshot:
		var snap State
		if json.Unmarshal(e.Payload, &snap) == nil {
			*s = snap
		}
	case EvSessionInitialized:
		s.Status = "active"
		s.WorkspaceRoot, s.CanonicalRepoRoot, s.RepoName = str("workspaceRoot"), str("canonicalRepoRoot"), str("repoName")
		s.PromptCount = 1
	case EvPurposeRecorded:
		s.Purpose, s.Mode = str("purpose"), str("mode")
		s.PromptCount++
	case EvPurposeReminder:
		s.PromptCount++
		s.Reminders++
	case EvTaskAction:
		if str("action") == "prompt" {
			s.PromptCount++
		}
	case EvToolInvoked:
		s.ToolCount++
		s.LastTool = str("tool")
	case EvEvidenceCaptured:
		s.EvidenceCount++
		if f := str("file"); f != "" {
			s.LastEditedFile = f
		}
	case EvSubagentTracked:
		var sa Subagent
		if json.Unmarshal(e.Payload, &sa) == nil && sa.ID != "" {
			s.Subagents = append(s.Subagents, sa)
		}
	case EvPreCompact:
		s.PreCompact = p
	case EvStopCheck:
		s.LastStopCheck = p
		if b, _ := p["blocked"].(bool); !b {
			s.Status = "stopped"
		} else {
			s.Status = "active"
		}
	}
}

// Fold reads session sid's manifest and folds it. A missing manifest is
// an empty state; lines that are not events (a torn or corrupt line) are
// skipped, so one bad line never loses the rest.
func Fold(home, sid string) (State, error) {
	s := State{SessionID: replay.SafeID(sid)}
	f, err := safefile.OpenOwn(ManifestPath(home, sid), safefile.MaxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxManifestLine)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type == "" {
			continue
		}
		s.apply(e)
	}
	s.SessionID = replay.SafeID(sid)
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return s, err
	}
	return s, nil
}

// record appends one event to the session's manifest, compacts it when
// it has grown past ManifestMaxBytes, and rewrites the legacy snapshot
// <sid>.json from the fold.
func (r *run) record(typ string, payload any) (State, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return State{}, err
	}
	e := Event{SchemaVersion: 1, TS: replay.Timestamp(r.now), SessionID: r.sid, Type: typ, Payload: b}
	line, err := json.Marshal(e)
	if err != nil {
		return State{}, err
	}
	path := ManifestPath(r.Home, r.sid)
	if err := statefile.AppendLine(path, line); err != nil {
		return State{}, err
	}
	if err := compactIfLarge(r.Home, r.sid, r.now); err != nil {
		return State{}, err
	}
	s, err := Fold(r.Home, r.sid)
	if err != nil {
		return s, err
	}
	return s, statefile.WriteJSON(replay.SessionFile(r.Home, r.sid, ".json"), s, 0o600)
}

// compactIfLarge compacts the manifest once it has grown past
// ManifestMaxBytes, the only time it is compacted: below that, the lines
// stay as they were appended, readable one event at a time.
func compactIfLarge(home, sid string, now time.Time) error {
	if info, err := os.Stat(ManifestPath(home, sid)); err == nil && info.Size() > ManifestMaxBytes {
		return Compact(home, sid, now)
	}
	return nil
}

// Compact replaces the manifest by one __snapshot__ line holding its
// fold, through a temporary file renamed over it, under the manifest's
// append lock so no concurrent append is lost.
func Compact(home, sid string, now time.Time) error {
	return compact(home, sid, replay.Timestamp(now))
}

func compact(home, sid, ts string) error {
	path := ManifestPath(home, sid)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := statefile.Lock(f); err != nil {
		return err
	}
	defer statefile.Unlock(f)
	s, err := Fold(home, sid)
	if err != nil {
		return err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	line, err := json.Marshal(Event{SchemaVersion: 1, TS: ts, SessionID: replay.SafeID(sid), Type: EvSnapshot, Payload: b})
	if err != nil {
		return err
	}
	return statefile.WriteAtomic(path, append(line, '\n'), 0o600)
}
