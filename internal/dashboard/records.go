package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/sessionstore"
)

// Limits on what the dashboard reads: the files are written by other
// programs and may be huge or hostile.
const (
	maxFileBytes   = 32 << 20
	maxLineBytes   = 1 << 20
	maxEntries     = 20000
	maxDirEntries  = 5000
	idleAfter      = 30 * time.Minute
	maxSessionID   = 128
	sessionsFolder = "sessions"
)

var sessionIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`) })

// validSessionID reports whether id can name a session's files: the
// character set the hooks sanitise session ids to. Anything else (a
// slash, dots, percent-encoded traversal) is refused, never rewritten,
// so a hostile id can never reach another session's files.
func validSessionID(id string) bool { return sessionIDPattern().MatchString(id) }

// Session is one row of the session list.
type Session struct {
	ID string `json:"id"`
	// Type is hook (Claude Code hooks wrote a manifest or state file),
	// router (only the router's replay file) or http (the session store).
	Type string `json:"type"`
	// CreatedAt and LastActivity are Unix milliseconds (0: unknown).
	CreatedAt    int64 `json:"createdAt"`
	LastActivity int64 `json:"lastActivity"`
	// Status is active, idle (no activity for 30 minutes), ended (a
	// router session the audit log saw end), expired (an HTTP session
	// past its TTL), or what the hook state file says.
	Status        string         `json:"status"`
	Purpose       string         `json:"purpose,omitempty"`
	ReplayCount   int            `json:"replayCount"`
	EvidenceCount int            `json:"evidenceCount"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// Created and Last are the times as time.Time for the pages.
func (s Session) Created() time.Time { return msTime(s.CreatedAt) }

// Last is LastActivity as a time.
func (s Session) Last() time.Time { return msTime(s.LastActivity) }

func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// eachLine streams the JSON lines of a file within the caps; a missing or
// refused file has none.
func eachLine(ctx context.Context, path string, fn func(line []byte)) {
	f, err := safefile.Open(path, safefile.Options{MaxBytes: maxFileBytes})
	if err != nil {
		return
	}
	defer f.Close()
	_ = safefile.ScanLines(f.Reader(ctx), maxLineBytes, func(_ int, line []byte, cut bool) bool {
		if t := bytes.TrimSpace(line); !cut && len(t) > 0 && json.Valid(t) {
			fn(t)
		}
		return ctx.Err() == nil
	})
}

// parseTime reads a timestamp as the hooks and the router write them:
// RFC 3339 text or Unix milliseconds. 0 means none.
func parseTime(v any) int64 {
	switch t := v.(type) {
	case string:
		if p, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return p.UnixMilli()
		}
		if n, err := strconv.ParseInt(t, 10, 64); err == nil {
			return n
		}
	case float64:
		if t > 0 && t < math.MaxInt64 {
			if t < 1e11 { // seconds
				return int64(t * 1000)
			}
			return int64(t)
		}
	}
	return 0
}

func str(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func first(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil {
			return v
		}
	}
	return nil
}

// sidecars are the other per-session files the hooks keep; they are not
// sessions of their own.
var sidecars = []string{"-tasks", "-trust", "-pre-compact", "-purpose-hash", "-audit-done"}

type sessionFiles struct {
	manifest, legacy, replay, evidence string
	modified                           time.Time
}

// scanSessions groups the files of EVOKORE_HOME/sessions by session id.
func scanSessions(home string) map[string]*sessionFiles {
	dir := filepath.Join(home, sessionsFolder)
	out := map[string]*sessionFiles{}
	d, err := os.Open(dir)
	if err != nil {
		return out
	}
	defer d.Close()
	entries, _ := d.ReadDir(maxDirEntries)
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		name := e.Name()
		var id, kind string
		switch {
		case strings.HasSuffix(name, "-replay.jsonl"):
			id, kind = strings.TrimSuffix(name, "-replay.jsonl"), "replay"
		case strings.HasSuffix(name, "-evidence.jsonl"):
			id, kind = strings.TrimSuffix(name, "-evidence.jsonl"), "evidence"
		case strings.HasSuffix(name, ".jsonl"):
			id, kind = strings.TrimSuffix(name, ".jsonl"), "manifest"
		case strings.HasSuffix(name, ".json"):
			id, kind = strings.TrimSuffix(name, ".json"), "legacy"
			for _, s := range sidecars {
				if strings.HasSuffix(id, s) {
					kind = ""
				}
			}
		}
		if kind == "" || !validSessionID(id) {
			continue
		}
		sf := out[id]
		if sf == nil {
			sf = &sessionFiles{}
			out[id] = sf
		}
		path := filepath.Join(dir, name)
		switch kind {
		case "replay":
			sf.replay = path
		case "evidence":
			sf.evidence = path
		case "manifest":
			sf.manifest = path
		case "legacy":
			sf.legacy = path
		}
		if info, err := e.Info(); err == nil && info.ModTime().After(sf.modified) {
			sf.modified = info.ModTime()
		}
	}
	return out
}

// listSessions merges the hook and router sessions on disk with the HTTP
// sessions of store (nil: the file store under home), newest activity
// first. An HTTP session idle for longer than ttl (0: never) is expired.
func listSessions(ctx context.Context, home string, store sessionstore.Store, ttl time.Duration, now time.Time) []Session {
	byID := map[string]*Session{}
	for id, sf := range scanSessions(home) {
		byID[id] = fileSession(ctx, id, sf)
	}
	var recs []sessionstore.Record
	if store != nil {
		recs, _ = store.List(ctx)
	} else {
		recs = storedSessions(ctx, home)
	}
	for _, r := range recs {
		if !validSessionID(r.ID) {
			continue
		}
		s, ok := byID[r.ID]
		if !ok {
			s = &Session{ID: r.ID, Metadata: map[string]any{}}
			byID[r.ID] = s
		}
		applyRecord(s, r, ttl, now)
	}
	// A router session whose end the audit log records has ended: its
	// client exited, however recent its last call.
	for id := range endedSessions(ctx, home) {
		if s, ok := byID[id]; ok && s.Type == "router" {
			s.Status = "ended"
		}
	}
	return newestFirst(byID, now)
}

// fileSession is the session a hook's or the router's files on disk
// describe: its type, counts and paths, and when it was created and last
// active by the times its records carry (the files' modification time
// when none does).
func fileSession(ctx context.Context, id string, sf *sessionFiles) *Session {
	s := &Session{ID: id, Type: "router", LastActivity: sf.modified.UnixMilli(), Metadata: map[string]any{}}
	if sf.manifest != "" || sf.legacy != "" {
		s.Type = "hook"
	}
	var latest int64
	seen := func(ts int64) {
		if ts > 0 && (s.CreatedAt == 0 || ts < s.CreatedAt) {
			s.CreatedAt = ts
		}
		latest = max(latest, ts)
	}
	readManifest(ctx, sf, s, seen)
	stamp := func(line []byte) {
		var e struct {
			TS        any `json:"ts"`
			Timestamp any `json:"timestamp"`
		}
		if json.Unmarshal(line, &e) == nil {
			seen(max(parseTime(e.TS), parseTime(e.Timestamp)))
		}
	}
	if sf.replay != "" {
		s.Metadata["replayPath"] = sf.replay
		eachLine(ctx, sf.replay, func(line []byte) { s.ReplayCount++; stamp(line) })
	}
	if sf.evidence != "" {
		s.Metadata["evidencePath"] = sf.evidence
		eachLine(ctx, sf.evidence, func(line []byte) { s.EvidenceCount++; stamp(line) })
	}
	if latest > 0 {
		s.LastActivity = latest
	}
	if s.CreatedAt == 0 || s.CreatedAt > s.LastActivity {
		s.CreatedAt = s.LastActivity
	}
	return s
}

// applyRecord folds a stored HTTP session into s: a hook session stays a
// hook's, any other is HTTP; its times, activations, role, tenant and
// metadata; expired when idle longer than ttl (0: never).
func applyRecord(s *Session, r sessionstore.Record, ttl time.Duration, now time.Time) {
	if s.Type != "hook" {
		s.Type = "http"
	}
	s.CreatedAt = r.Created.UnixMilli()
	if last := r.LastSeen.UnixMilli(); last > s.LastActivity {
		s.LastActivity = last
	}
	s.Metadata["activatedTools"] = r.Activations
	s.Metadata["role"] = r.Role
	if r.Tenant != "" {
		s.Metadata["tenant"] = r.Tenant
	}
	if len(r.Metadata) > 0 {
		s.Metadata["sessionMetadata"] = r.Metadata
	}
	if ttl > 0 && now.Sub(r.LastSeen) > ttl {
		s.Status = "expired"
	}
}

// newestFirst lists the sessions by last activity, newest first (then
// by id); one with no status yet is active, or idle after idleAfter.
func newestFirst(byID map[string]*Session, now time.Time) []Session {
	out := make([]Session, 0, len(byID))
	for _, s := range byID {
		if s.Status == "" {
			s.Status = "active"
			if now.Sub(msTime(s.LastActivity)) > idleAfter {
				s.Status = "idle"
			}
		}
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].LastActivity != out[j].LastActivity {
			return out[i].LastActivity > out[j].LastActivity
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// readManifest folds what the session list shows from the hooks'
// manifest (<sid>.jsonl, one {ts, type, payload} a line) or legacy state
// (<sid>.json).
func readManifest(ctx context.Context, sf *sessionFiles, s *Session, seen func(int64)) {
	if sf.manifest != "" {
		eachLine(ctx, sf.manifest, func(line []byte) {
			var ev struct {
				TS      any            `json:"ts"`
				Type    string         `json:"type"`
				Payload map[string]any `json:"payload"`
			}
			if json.Unmarshal(line, &ev) != nil {
				return
			}
			seen(parseTime(ev.TS))
			if p := str(first(ev.Payload, "purpose")); p != "" {
				s.Purpose = p
			}
			if st := str(first(ev.Payload, "status")); st != "" && (ev.Type == "__snapshot__" || ev.Type == "session_initialized") {
				s.Status = st
			}
		})
	}
	if sf.legacy != "" {
		b, err := safefile.ReadFile(ctx, sf.legacy, safefile.Options{MaxBytes: maxLineBytes})
		var st map[string]any
		if err == nil && json.Unmarshal(b, &st) == nil {
			if p := str(first(st, "purpose")); p != "" && s.Purpose == "" {
				s.Purpose = p
			}
			if v := str(first(st, "status")); v != "" {
				s.Status = v
			}
			seen(parseTime(first(st, "created", "createdAt", "startedAt")))
			if m, ok := st["metrics"]; ok {
				s.Metadata["metrics"] = m
			}
		}
	}
	if len(s.Status) > 32 {
		s.Status = s.Status[:32]
	}
}

// filterSessions applies the list's filters: type, status and since
// (Unix ms; 0 none).
func filterSessions(in []Session, typ, status string, since int64) []Session {
	out := in[:0:0]
	for _, s := range in {
		if (typ != "" && s.Type != typ) || (status != "" && s.Status != status) || (since > 0 && s.LastActivity < since) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// parseSince reads a since filter: a duration back from now ("90m",
// "24h", "7d"), RFC 3339, or Unix milliseconds. ok is false for
// anything else.
func parseSince(v string, now time.Time) (int64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, true
	}
	if d, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n >= 0 && n < 100000 {
			return now.Add(-time.Duration(n) * 24 * time.Hour).UnixMilli(), true
		}
		return 0, false
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d).UnixMilli(), true
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UnixMilli(), true
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return n, true
	}
	return 0, false
}

// readLines returns a file's JSON lines as objects, the last maxEntries.
func readLines(ctx context.Context, path string) []map[string]any {
	out := []map[string]any{}
	eachLine(ctx, path, func(line []byte) {
		var m map[string]any
		if json.Unmarshal(line, &m) == nil && m != nil {
			out = append(out, m)
			if len(out) > maxEntries {
				out = out[1:]
			}
		}
	})
	return out
}

func replayPath(home, id string) string {
	return filepath.Join(home, sessionsFolder, id+"-replay.jsonl")
}

func evidencePath(home, id string) string {
	return filepath.Join(home, sessionsFolder, id+"-evidence.jsonl")
}

// storedSessions reads the HTTP sessions the file session store keeps,
// EVOKORE_HOME/session-store/<id>.json in EVOKORE-MCP's shape
// ({sessionId, createdAt, lastAccessedAt, activatedTools, role, …}, times
// in Unix ms). A file that does not parse, or whose id does not match its
// name, is skipped.
func storedSessions(ctx context.Context, home string) []sessionstore.Record {
	dir := filepath.Join(home, "session-store")
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	entries, _ := d.ReadDir(maxDirEntries)
	var out []sessionstore.Record
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || !validSessionID(id) {
			continue
		}
		b, err := safefile.ReadFile(ctx, filepath.Join(dir, e.Name()), safefile.Options{MaxBytes: maxLineBytes})
		if err != nil {
			continue
		}
		var w struct {
			ID          string            `json:"sessionId"`
			Created     int64             `json:"createdAt"`
			LastSeen    int64             `json:"lastAccessedAt"`
			Activations []string          `json:"activatedTools"`
			Role        string            `json:"role"`
			Tenant      string            `json:"tenantId"`
			Metadata    map[string]string `json:"metadata"`
		}
		if json.Unmarshal(b, &w) != nil || w.ID != id {
			continue
		}
		out = append(out, sessionstore.Record{ID: id, Role: w.Role, Tenant: w.Tenant, Activations: w.Activations, Metadata: w.Metadata,
			Created: time.UnixMilli(w.Created), LastSeen: time.UnixMilli(w.LastSeen)})
	}
	return out
}

// endedSessions are the sessions the audit log (the live file and the
// newest rotated one) records as ended. Lines are filtered by their bytes
// before any is decoded: most are tool calls.
func endedSessions(ctx context.Context, home string) map[string]bool {
	ended := map[string]bool{}
	for _, path := range []string{auditPath(home) + ".1", auditPath(home)} {
		eachLine(ctx, path, func(line []byte) {
			if !bytes.Contains(line, []byte(`"session_end"`)) {
				return
			}
			var e struct {
				Type    string `json:"eventType"`
				Session string `json:"sessionId"`
			}
			if json.Unmarshal(line, &e) == nil && e.Type == "session_end" && e.Session != "" {
				ended[e.Session] = true
			}
		})
	}
	return ended
}
