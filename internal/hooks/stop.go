package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/replay"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/statefile"
	"github.com/evokore/evokore/internal/voice"
)

// Task is one entry of sessions/<sid>-tasks.json, the list an agent keeps
// of what it promised to do. The file is either an array of tasks or
// {"tasks": [...]}; a task is done when its status is completed, done or
// cancelled, or when done or completed is true.
type Task struct {
	ID          any    `json:"id,omitempty"`
	Title       string `json:"title,omitempty"`
	Text        string `json:"text,omitempty"`
	Description string `json:"description,omitempty"`
	Content     string `json:"content,omitempty"`
	Status      string `json:"status,omitempty"`
	Done        bool   `json:"done,omitempty"`
	Completed   bool   `json:"completed,omitempty"`
}

// open reports whether the task still needs doing.
func (t Task) open() bool {
	if t.Done || t.Completed {
		return false
	}
	switch strings.ToLower(t.Status) {
	case "completed", "complete", "done", "cancelled", "canceled", "skipped":
		return false
	}
	return true
}

func (t Task) label() string {
	for _, s := range []string{t.Title, t.Text, t.Content, t.Description} {
		if s != "" {
			return replay.Truncate(s, replay.MaxSummary)
		}
	}
	if t.ID != nil {
		return fmt.Sprint(t.ID)
	}
	return "(untitled task)"
}

// readTasks reads the session's task list; a missing list has no tasks,
// one that is not a task list is an error (and the hook fails safe).
func readTasks(path string) ([]Task, error) {
	data, err := safefile.Load(path, safefile.MaxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list []Task
	if err := json.Unmarshal(data, &list); err == nil {
		return list, nil
	}
	var doc struct {
		Tasks []Task `json:"tasks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s is not a task list: %w", path, err)
	}
	return doc.Tasks, nil
}

func openTasks(tasks []Task) []Task {
	var out []Task
	for _, t := range tasks {
		if t.open() {
			out = append(out, t)
		}
	}
	return out
}

// tillDone is the Stop hook that refuses to stop while tasks are open.
func tillDone(r *run) (int, error) {
	tasks, err := readTasks(r.file("-tasks.json"))
	if err != nil {
		return ExitOK, err
	}
	open := openTasks(tasks)
	if len(open) > 0 {
		labels := make([]string, len(open))
		for i, t := range open {
			labels[i] = t.label()
		}
		if _, err := r.record(EvStopCheck, map[string]any{"blocked": true, "open": len(open), "total": len(tasks)}); err != nil {
			_ = r.log("error", map[string]any{"error": err.Error()})
		}
		fmt.Fprintf(r.Stderr, "[EVOKORE tilldone] %d of %d tasks are still open; finish them (or mark them cancelled in %s) before stopping:\n",
			len(open), len(tasks), r.file("-tasks.json"))
		for _, l := range labels {
			fmt.Fprintf(r.Stderr, "  - %s\n", l)
		}
		return ExitBlock, nil
	}
	// record compacts the manifest when it is over ManifestMaxBytes; a
	// stop does not compact a smaller one (docs/hooks.md, issue 32).
	s, err := r.record(EvStopCheck, map[string]any{"blocked": false, "open": 0, "total": len(tasks)})
	if err != nil {
		return ExitOK, err
	}
	return ExitOK, syncMemory(r, s, tasks)
}

// preCompact is the PreCompact hook: it saves what the session knew.
func preCompact(r *run) (int, error) {
	s, err := Fold(r.Home, r.sid)
	if err != nil {
		return ExitOK, err
	}
	tasks, terr := readTasks(r.file("-tasks.json"))
	snap := map[string]any{
		"sessionId":      r.sid,
		"ts":             replay.Timestamp(r.now),
		"trigger":        r.p.Trigger,
		"reason":         r.p.Reason,
		"purpose":        s.Purpose,
		"mode":           s.Mode,
		"toolCount":      s.ToolCount,
		"evidenceCount":  s.EvidenceCount,
		"lastEditedFile": s.LastEditedFile,
		"openTasks":      len(openTasks(tasks)),
		"subagents":      len(s.Subagents),
	}
	if r.p.CustomInstr != "" {
		snap["customInstructions"] = replay.Truncate(r.p.CustomInstr, 1000)
	}
	if err := statefile.WriteJSON(r.file("-pre-compact.json"), snap, 0o600); err != nil {
		return ExitOK, err
	}
	if _, err := r.record(EvPreCompact, snap); err != nil {
		return ExitOK, err
	}
	return ExitOK, terr
}

// voiceTimeout bounds voice-stop's whole exchange with the sidecar.
const voiceTimeout = 5 * time.Second

// voiceStop is the Stop hook that speaks a summary of the session through
// the voice sidecar when one is listening. It never blocks the stop.
func voiceStop(r *run) (int, error) {
	s, err := Fold(r.Home, r.sid)
	if err != nil {
		return ExitOK, err
	}
	tasks, _ := readTasks(r.file("-tasks.json"))
	text := spokenSummary(s, len(tasks), len(openTasks(tasks)))
	host := r.getenv("VOICE_SIDECAR_HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	port := r.getenv("VOICE_SIDECAR_PORT")
	if port == "" {
		port = "8888"
	}
	persona := r.getenv("VOICE_SIDECAR_PERSONA")
	if persona == "" {
		persona = "reviewer"
	}
	ctx, cancel := context.WithTimeout(context.Background(), voiceTimeout)
	defer cancel()
	url := "ws://" + net.JoinHostPort(host, port)
	if err := voice.Say(ctx, url, text, persona); err != nil {
		_ = r.log("voice_unavailable", map[string]any{"error": err.Error()})
		return ExitOK, nil
	}
	return ExitOK, r.log("voice_sent", map[string]any{"persona": persona, "chars": len(text)})
}

// spokenSummary is what voice-stop says: short, and without paths or
// commands, which read badly aloud.
func spokenSummary(s State, tasks, open int) string {
	var b strings.Builder
	if s.Purpose != "" {
		fmt.Fprintf(&b, "Session finished: %s. ", replay.Truncate(s.Purpose, 120))
	} else {
		b.WriteString("Session finished. ")
	}
	fmt.Fprintf(&b, "%d tool calls, %d pieces of evidence", s.ToolCount, s.EvidenceCount)
	if len(s.Subagents) > 0 {
		fmt.Fprintf(&b, ", %d subagents", len(s.Subagents))
	}
	b.WriteString(".")
	if tasks > 0 {
		fmt.Fprintf(&b, " %d of %d tasks done.", tasks-open, tasks)
	}
	return b.String()
}
