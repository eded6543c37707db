// Package replay is the on-disk format of session replays and the file
// helpers every writer of EVOKORE_HOME's session state shares: the
// `evokore hook session-replay` Claude Code hook and the router, which
// records its own MCP sessions, append the same Entry lines to
// sessions/<sid>-replay.jsonl, so the analytics natives and the dashboard
// read one format whoever wrote it.
//
// Session ids come from outside (a hook payload, an MCP client); SafeID
// reduces them to [A-Za-z0-9_-] before they become part of a file name, so
// no id can name a file outside the sessions directory.
//
// Appends take an exclusive advisory lock, so concurrent hooks and
// routers never interleave a line. Logs that grow without bound
// (hooks.jsonl, the audit log) rotate through AppendRotating; session
// files are bounded by Prune.
package replay

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/evokore/evokore/internal/jsonenc"
	"github.com/evokore/evokore/internal/statefile"
)

// Outcomes of a replayed call.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"
)

// Limits of an Entry's free-text fields, in characters (the original's).
const (
	MaxSummary = 200
	MaxOutput  = 300
)

// Entry is one line of sessions/<sid>-replay.jsonl: one tool call.
// The first six fields are EVOKORE-MCP's; LatencyMS and Source are
// evokore's additions (omitted when unknown) and readers of the original
// format ignore them.
type Entry struct {
	// TS is when the line was written (RFC 3339, UTC, milliseconds).
	TS string `json:"ts"`
	// Tool is the tool's name as the client called it.
	Tool string `json:"tool"`
	// Summary says what the call was about (a command, a path, a query)
	// in at most MaxSummary characters, never an argument that looks like
	// a secret.
	Summary string `json:"summary"`
	// Outcome is OutcomeOK or OutcomeError.
	Outcome string `json:"outcome"`
	// Output is the start of the result, at most MaxOutput characters.
	Output string `json:"output,omitempty"`
	// InvocationTS is when the call started, when known.
	InvocationTS string `json:"invocation_ts,omitempty"`
	// LatencyMS is how long the call took, when the writer timed it.
	LatencyMS *int64 `json:"latency_ms,omitempty"`
	// Source is who recorded the line: "hook" or "router".
	Source string `json:"source,omitempty"`
	// Run is the run_code run the call belongs to: the run's own call
	// and each call its program made.
	Run string `json:"run_id,omitempty"`
}

// AppendJSON appends e as json.Marshal writes it, without reflection:
// the router writes a line per tool call.
func (e Entry) AppendJSON(dst []byte) []byte {
	b := jsonenc.String(append(dst, `{"ts":`...), e.TS)
	b = jsonenc.String(append(b, `,"tool":`...), e.Tool)
	b = jsonenc.String(append(b, `,"summary":`...), e.Summary)
	b = jsonenc.String(append(b, `,"outcome":`...), e.Outcome)
	if e.Output != "" {
		b = jsonenc.String(append(b, `,"output":`...), e.Output)
	}
	if e.InvocationTS != "" {
		b = jsonenc.String(append(b, `,"invocation_ts":`...), e.InvocationTS)
	}
	if e.LatencyMS != nil {
		b = strconv.AppendInt(append(b, `,"latency_ms":`...), *e.LatencyMS, 10)
	}
	if e.Source != "" {
		b = jsonenc.String(append(b, `,"source":`...), e.Source)
	}
	if e.Run != "" {
		b = jsonenc.String(append(b, `,"run_id":`...), e.Run)
	}
	return append(b, '}')
}

// timestampLayout is how every line under EVOKORE_HOME writes a time.
const timestampLayout = "2006-01-02T15:04:05.000Z"

// Timestamp formats t the way every line under EVOKORE_HOME does.
func Timestamp(t time.Time) string {
	var buf [len(timestampLayout)]byte
	return string(AppendTimestamp(buf[:0], t))
}

// AppendTimestamp appends Timestamp(t) to dst. It writes the digits
// itself: time.Format reads its layout anew at each call, and the router
// writes two of these per tool call.
func AppendTimestamp(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, timestampLayout)
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	return append(dst,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

var unsafeID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]`) })

// MaxIDLen bounds a sanitised id, so a hostile id cannot make a file name
// longer than the filesystem allows.
const MaxIDLen = 128

// DefaultID is the id of a session that gave none.
const DefaultID = "default"

// SafeID reduces a session id to the characters file names may use:
// everything outside [A-Za-z0-9_-] becomes "_", the result is cut to
// MaxIDLen, and an empty id becomes DefaultID. "../x" is "___x": there is
// no id that leaves the sessions directory.
func SafeID(id string) string {
	s := unsafeID().ReplaceAllString(id, "_")
	if len(s) > MaxIDLen {
		s = s[:MaxIDLen]
	}
	if s == "" {
		return DefaultID
	}
	return s
}

// SessionsDir is where session files live under home (EVOKORE_HOME).
func SessionsDir(home string) string { return filepath.Join(home, "sessions") }

// SessionFile is sessions/<safe sid><suffix>, e.g. suffix "-replay.jsonl".
func SessionFile(home, sid, suffix string) string {
	return filepath.Join(SessionsDir(home), SafeID(sid)+suffix)
}

// Path is the replay file of session sid under home.
func Path(home, sid string) string { return SessionFile(home, sid, "-replay.jsonl") }

// EvidencePath is the evidence file of session sid under home.
func EvidencePath(home, sid string) string { return SessionFile(home, sid, "-evidence.jsonl") }

// Append writes entries as lines of session sid's replay file, in one
// write (not synced: see statefile.AppendLines), filling TS when empty
// and bounding the free-text fields.
func Append(home, sid string, entries ...Entry) error {
	bp := appendBufs.Get().(*[]byte)
	buf := (*bp)[:0]
	for _, e := range entries {
		if e.TS == "" {
			e.TS = Timestamp(time.Now())
		}
		if e.Outcome == "" {
			e.Outcome = OutcomeOK
		}
		e.Summary = Truncate(e.Summary, MaxSummary)
		e.Output = Truncate(e.Output, MaxOutput)
		buf = append(e.AppendJSON(buf), '\n')
	}
	var err error
	if len(buf) > 0 {
		err = statefile.AppendLines(Path(home, sid), buf)
	}
	if cap(buf) <= 1<<20 {
		*bp = buf
		appendBufs.Put(bp)
	}
	return err
}

// appendBufs keep Append's buffers: the router appends a batch of lines
// per session many times a second.
var appendBufs = sync.Pool{New: func() any { return new([]byte) }}

// Truncate cuts s to at most n characters (runes), never splitting one,
// and replaces invalid UTF-8 so the line stays valid JSON text.
func Truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// TrustTier names the band a trust score falls in, as the session trust
// ledgers (the hooks' and the router's) and session_trust_report show it.
func TrustTier(score float64) string {
	switch {
	case score >= 0.8:
		return "Trusted"
	case score >= 0.5:
		return "Standard"
	case score >= 0.3:
		return "Probation"
	}
	return "Untrusted"
}
