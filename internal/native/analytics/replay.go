package analytics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/safefile"
)

// sessionFiles are one session's hook records.
type sessionFiles struct {
	id       string
	replay   string
	evidence string
}

// listSessions returns the sessions whose replay file changed within
// daysBack days and that match filter, in session id order.
func listSessions(ctx context.Context, dir, filter string, daysBack int, now time.Time) []sessionFiles {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	cutoff := now.Add(-time.Duration(daysBack) * 24 * time.Hour)
	var out []sessionFiles
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), "-replay.jsonl")
		if !ok || e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil || (daysBack > 0 && info.ModTime().Before(cutoff)) {
			continue
		}
		if filter != "" && !strings.Contains(id, filter) && !projectMatches(ctx, dir, id, filter) {
			continue
		}
		out = append(out, sessionFiles{id: id, replay: filepath.Join(dir, e.Name()), evidence: filepath.Join(dir, id+"-evidence.jsonl")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// projectMatches reports whether the project a session recorded contains
// filter: from the manifest's session_initialized event, else from the
// legacy state file.
func projectMatches(ctx context.Context, dir, id, filter string) bool {
	type project struct {
		WorkspaceRoot     string `json:"workspaceRoot"`
		CanonicalRepoRoot string `json:"canonicalRepoRoot"`
		RepoName          string `json:"repoName"`
	}
	match := func(p project) bool {
		for _, s := range []string{p.WorkspaceRoot, p.CanonicalRepoRoot, p.RepoName} {
			if s != "" && strings.Contains(s, filter) {
				return true
			}
		}
		return false
	}
	found := false
	if f, err := openFile(filepath.Join(dir, id+".jsonl")); err == nil {
		_ = eachJSONLine(f.Reader(ctx), func(line []byte) {
			if found {
				return
			}
			var ev struct {
				Type    string  `json:"type"`
				Payload project `json:"payload"`
			}
			if json.Unmarshal(line, &ev) == nil && (ev.Type == "session_initialized" || ev.Type == "__snapshot__") && match(ev.Payload) {
				found = true
			}
		})
		f.Close()
	}
	if found {
		return true
	}
	var legacy project
	if b, err := safefile.ReadFile(ctx, filepath.Join(dir, id+".json"), safefile.Options{MaxBytes: maxLineBytes}); err == nil && json.Unmarshal(b, &legacy) == nil {
		return match(legacy)
	}
	return false
}

// replayStats summarises one replay file.
type replayStats struct {
	calls   int
	byTool  map[string]int
	repeats map[string]int
	errors  map[string]int
}

func readReplay(ctx context.Context, path string) replayStats {
	s := replayStats{byTool: map[string]int{}, repeats: map[string]int{}, errors: map[string]int{}}
	f, err := openFile(path)
	if err != nil {
		return s
	}
	defer f.Close()
	prev := ""
	_ = eachJSONLine(f.Reader(ctx), func(line []byte) {
		var e struct {
			Tool    any    `json:"tool"`
			Outcome string `json:"outcome"`
		}
		if json.Unmarshal(line, &e) != nil {
			return
		}
		tool, ok := e.Tool.(string)
		if !ok || tool == "" {
			return
		}
		s.calls++
		s.byTool[tool]++
		if tool == prev {
			s.repeats[tool]++
		}
		if e.Outcome == "error" {
			s.errors[tool]++
		}
		prev = tool
	})
	return s
}

// countLines counts the non-blank lines of a file; a missing or refused
// file has none.
func countLines(ctx context.Context, path string) int {
	f, err := openFile(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	_ = safefile.ScanLines(f.Reader(ctx), maxLineBytes, func(_ int, line []byte, _ bool) bool {
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
		return true
	})
	return n
}

// ToolStats is one tool's share of the calls.
type ToolStats struct {
	Total              int     `json:"total"`
	Pct                float64 `json:"pct"`
	ConsecutiveRepeats int     `json:"consecutive_repeats"`
	Errors             int     `json:"errors"`
}

// RetrySignal is a tool called back to back.
type RetrySignal struct {
	Tool             string `json:"tool"`
	ConsecutiveCount int    `json:"consecutive_count"`
	Interpretation   string `json:"interpretation"`
}

// ReplayReport is session_analyze_replay's answer.
type ReplayReport struct {
	SessionsAnalyzed      int                  `json:"sessions_analyzed"`
	Period                string               `json:"period"`
	ToolFrequency         map[string]ToolStats `json:"tool_frequency"`
	RetrySignals          []RetrySignal        `json:"retry_signals"`
	SessionsZeroEvidence  int                  `json:"sessions_with_zero_evidence"`
	SessionsZeroEvidenceP float64              `json:"sessions_with_zero_evidence_pct"`
	Message               string               `json:"message,omitempty"`
}

func period(daysBack int, now time.Time) string {
	return fmt.Sprintf("%s to %s", now.AddDate(0, 0, -daysBack).UTC().Format("2006-01-02"), now.UTC().Format("2006-01-02"))
}

func analyzeReplay(ctx context.Context, dir, filter string, daysBack, minCalls int, now time.Time) ReplayReport {
	r := ReplayReport{Period: period(daysBack, now), ToolFrequency: map[string]ToolStats{}, RetrySignals: []RetrySignal{}}
	sessions := listSessions(ctx, dir, filter, daysBack, now)
	if len(sessions) == 0 {
		r.Message = "No replay files found in " + dir + "."
		return r
	}
	total := 0
	counts, repeats, errs := map[string]int{}, map[string]int{}, map[string]int{}
	for _, s := range sessions {
		if ctx.Err() != nil {
			break
		}
		st := readReplay(ctx, s.replay)
		if st.calls < minCalls {
			continue
		}
		r.SessionsAnalyzed++
		total += st.calls
		for k, v := range st.byTool {
			counts[k] += v
		}
		for k, v := range st.repeats {
			repeats[k] += v
		}
		for k, v := range st.errors {
			errs[k] += v
		}
		if info, err := os.Stat(s.evidence); err != nil || !info.Mode().IsRegular() || info.Size() == 0 {
			r.SessionsZeroEvidence++
		}
	}
	for tool, n := range counts {
		r.ToolFrequency[tool] = ToolStats{Total: n, Pct: round(float64(n)/float64(total)*100, 1), ConsecutiveRepeats: repeats[tool], Errors: errs[tool]}
		if repeats[tool] > 0 {
			r.RetrySignals = append(r.RetrySignals, RetrySignal{Tool: tool, ConsecutiveCount: repeats[tool], Interpretation: interpret(tool, repeats[tool])})
		}
	}
	sort.Slice(r.RetrySignals, func(i, j int) bool {
		a, b := r.RetrySignals[i], r.RetrySignals[j]
		if a.ConsecutiveCount != b.ConsecutiveCount {
			return a.ConsecutiveCount > b.ConsecutiveCount
		}
		return a.Tool < b.Tool
	})
	if r.SessionsAnalyzed > 0 {
		r.SessionsZeroEvidenceP = round(float64(r.SessionsZeroEvidence)/float64(r.SessionsAnalyzed)*100, 1)
	}
	return r
}

func interpret(tool string, n int) string {
	switch {
	case tool == "Read" && n > 100:
		return "High: the same files are read again and again; @AI:NAV anchors would let the agent read only what it needs."
	case n > 50:
		return fmt.Sprintf("Moderate: %s ran %d times straight after itself; batching the calls would save turns.", tool, n)
	}
	return fmt.Sprintf("Low: %s ran %d times straight after itself.", tool, n)
}

// Scored is one session's work ratio.
type Scored struct {
	SessionID       string  `json:"session_id"`
	ReplayEntries   int     `json:"replay_entries"`
	EvidenceEntries int     `json:"evidence_entries"`
	WorkRatioPct    float64 `json:"work_ratio_pct"`
	Diagnosis       string  `json:"diagnosis,omitempty"`
}

// WorkReport is session_work_ratio's answer.
type WorkReport struct {
	SessionsScored    int      `json:"sessions_scored"`
	MedianWorkRatio   float64  `json:"median_work_ratio_pct"`
	Flagged           []Scored `json:"flagged_sessions"`
	HighEfficiency    []Scored `json:"high_efficiency_sessions"`
	ImprovementSignal string   `json:"improvement_signal"`
}

// highEfficiency is the work ratio, in percent, of a productive session.
const highEfficiency = 30

func workRatio(ctx context.Context, dir, filter string, daysBack int, threshold float64, now time.Time) WorkReport {
	w := WorkReport{Flagged: []Scored{}, HighEfficiency: []Scored{}}
	sessions := listSessions(ctx, dir, filter, daysBack, now)
	if len(sessions) == 0 {
		w.ImprovementSignal = "No replay files found in " + dir + "."
		return w
	}
	var scored []Scored
	for _, s := range sessions {
		if ctx.Err() != nil {
			break
		}
		calls := countLines(ctx, s.replay)
		if calls == 0 {
			continue
		}
		ev := countLines(ctx, s.evidence)
		scored = append(scored, Scored{SessionID: s.id, ReplayEntries: calls, EvidenceEntries: ev, WorkRatioPct: round(float64(ev)/float64(calls)*100, 1)})
	}
	w.SessionsScored = len(scored)
	ratios := make([]float64, len(scored))
	for i, s := range scored {
		ratios[i] = s.WorkRatioPct
		if s.WorkRatioPct < threshold {
			s.Diagnosis = fmt.Sprintf("Little evidence of work: %d tool calls left %d evidence records.", s.ReplayEntries, s.EvidenceEntries)
			w.Flagged = append(w.Flagged, s)
		}
		if s.WorkRatioPct >= highEfficiency {
			w.HighEfficiency = append(w.HighEfficiency, s)
		}
	}
	sort.Float64s(ratios)
	switch n := len(ratios); {
	case n == 0:
	case n%2 == 1:
		w.MedianWorkRatio = ratios[n/2]
	default:
		w.MedianWorkRatio = round((ratios[n/2-1]+ratios[n/2])/2, 1)
	}
	if len(w.Flagged) == 0 {
		w.ImprovementSignal = "Every session is above the threshold: work ratios look healthy."
	} else {
		w.ImprovementSignal = fmt.Sprintf("%d of %d sessions are below a %s%% work ratio; look at their replays for read or retry loops.",
			len(w.Flagged), len(scored), trimFloat(threshold))
	}
	return w
}

func trimFloat(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

var unsafeID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]`) })

// safeID reduces a session id to the characters hook file names use.
func safeID(id string) string { return unsafeID().ReplaceAllString(id, "_") }
