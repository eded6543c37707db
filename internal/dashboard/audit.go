package dashboard

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"
)

// AuditEntry is one audit line as the pages show it; Raw is the line
// itself, what the JSON API returns.
type AuditEntry struct {
	TS      int64
	Event   string
	Session string
	// Tenant is the tenant of the session that acted ("" for none).
	Tenant  string
	Tool    string
	Outcome string
	Raw     map[string]any
}

// auditFilter selects audit lines: each non-empty field must match.
type auditFilter struct {
	Event, Session, Tool string
	Since                int64
}

func (f auditFilter) match(e AuditEntry) bool {
	return (f.Event == "" || e.Event == f.Event) && (f.Session == "" || e.Session == f.Session) &&
		(f.Tool == "" || e.Tool == f.Tool) && (f.Since == 0 || e.TS >= f.Since)
}

// maxRotated is how many rotated audit files (audit.jsonl.1 …) are read.
const maxRotated = 9

func auditPath(home string) string { return filepath.Join(home, "audit", "audit.jsonl") }

// readAudit returns the audit log, newest first. Field names are read
// leniently (eventType or event or type; timestamp or ts), so lines of
// EVOKORE-MCP's AuditLog and of evokore's read alike.
func readAudit(ctx context.Context, home string) []AuditEntry {
	// The rotated files first (audit.jsonl.N is the oldest), so the
	// lines stay in the order they were written.
	var lines []map[string]any
	for i := maxRotated; i >= 1; i-- {
		lines = append(lines, readLines(ctx, auditPath(home)+"."+strconv.Itoa(i))...)
	}
	lines = append(lines, readLines(ctx, auditPath(home))...)
	if len(lines) > maxEntries {
		lines = lines[len(lines)-maxEntries:]
	}
	out := make([]AuditEntry, 0, len(lines))
	for i := len(lines) - 1; i >= 0; i-- {
		m := lines[i]
		out = append(out, AuditEntry{
			TS:      parseTime(first(m, "timestamp", "ts", "time")),
			Event:   str(first(m, "eventType", "event", "type")),
			Session: str(first(m, "sessionId", "session_id", "session")),
			Tenant:  str(m["tenantId"]),
			Tool:    str(first(m, "tool", "toolName")),
			Outcome: str(first(m, "outcome", "result", "decision")),
			Raw:     m,
		})
	}
	// Lines are appended in time order; a stable sort keeps that order
	// for equal or missing stamps.
	sort.SliceStable(out, func(i, j int) bool { return out[i].TS > out[j].TS })
	return out
}

// EventCount is one row of the audit summary.
type EventCount struct {
	Event string `json:"eventType"`
	Count int    `json:"count"`
}

func summarize(entries []AuditEntry) []EventCount {
	counts := map[string]int{}
	for _, e := range entries {
		counts[e.Event]++
	}
	out := make([]EventCount, 0, len(counts))
	for k, v := range counts {
		out = append(out, EventCount{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Event < out[j].Event
	})
	return out
}
