package audit

import (
	"strconv"

	"github.com/evokore/evokore/internal/events"
	"github.com/evokore/evokore/internal/jsonenc"
)

// An audit line leads with EVOKORE-MCP's AuditLog fields, so a reader of
// its audit.jsonl reads ours:
//
//	{"timestamp": <Unix ms>, "eventType": <its name>, "sessionId", "actor",
//	 "resource", "outcome": "success"|"failure"|"denied", "metadata": {…},
//
// then evokore's own fields, as the events package names them ("ts",
// "role", "tool", "latencyMs", "args", "approvalId", "detail", …).
// Where EVOKORE-MCP has the same event under another name, eventType is
// its name and "event" keeps ours (session_start → session_create,
// approval_granted → approval_grant, approval_denied → approval_deny).
// See docs/decisions.md.

// legacyNames are EVOKORE-MCP's audit names of the events it records
// under another name.
var legacyNames = map[events.Type]string{
	events.SessionStart:    "session_create",
	events.ApprovalGranted: "approval_grant",
	events.ApprovalDenied:  "approval_deny",
}

// Outcomes as EVOKORE-MCP's audit writes them.
const (
	outcomeSuccess = "success"
	outcomeFailure = "failure"
	outcomeDenied  = "denied"
)

// legacyOutcome maps an event to EVOKORE-MCP's three outcomes: a call
// that ran and failed (or a reload that failed) is a failure, a call a
// stage refused or a decision against is denied, the rest a success.
func legacyOutcome(e events.Event) string {
	switch e.Outcome {
	case events.OutcomeError:
		return outcomeFailure
	case events.OutcomeRefused:
		return outcomeDenied
	case events.OutcomeOK:
		return outcomeSuccess
	}
	switch e.Type {
	case events.AuthFailure, events.ToolError, "audit_dropped":
		return outcomeFailure
	case events.ApprovalDenied, events.Quarantine:
		return outcomeDenied
	}
	return outcomeSuccess
}

// appendAuditJSON appends e's audit line (without the newline); ok is
// false where the event cannot be written (a time beyond year 9999, a
// latency that is not a number).
func appendAuditJSON(dst []byte, e events.Event) (out []byte, ok bool) {
	if y := e.Time.Year(); y < 0 || y > 9999 {
		return dst, false
	}
	b := strconv.AppendInt(append(dst, `{"timestamp":`...), e.Time.UnixMilli(), 10)
	name, renamed := legacyNames[e.Type]
	if !renamed {
		name = string(e.Type)
	}
	b = jsonenc.String(append(b, `,"eventType":`...), name)
	b = field(b, `,"sessionId":`, e.Session)
	actor := e.Role
	if actor == "" {
		actor = "system"
	}
	b = jsonenc.String(append(b, `,"actor":`...), actor)
	b = field(b, `,"resource":`, e.Tool)
	outcome := legacyOutcome(e)
	b = jsonenc.String(append(b, `,"outcome":`...), outcome)

	// metadata holds what EVOKORE-MCP kept there: the transport, the
	// tool's source and latency, the failure's text.
	mark := len(b)
	b = append(b, `,"metadata":{`...)
	open := len(b)
	b = member(b, open, `"transport":`, e.Transport)
	b = member(b, open, `"source":`, e.Source)
	if e.LatencyMs != nil {
		if len(b) > open {
			b = append(b, ',')
		}
		if b, ok = jsonenc.Float(append(b, `"latencyMs":`...), *e.LatencyMs); !ok {
			return dst, false
		}
	}
	if outcome == outcomeFailure {
		b = member(b, open, `"error":`, e.Detail)
	}
	if len(b) == open {
		b = b[:mark]
	} else {
		b = append(b, '}')
	}

	// evokore's own fields follow.
	if b, ok = jsonenc.Time(append(b, `,"ts":`...), e.Time); !ok {
		return dst, false
	}
	if renamed {
		b = jsonenc.String(append(b, `,"event":`...), e.Type)
	}
	if b, ok = events.AppendMembers(b, e, false); !ok {
		return dst, false
	}
	return append(b, '}'), true
}

// field appends an omitempty string member after others.
func field(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	return jsonenc.String(append(b, name...), v)
}

// member appends an omitempty string member to an object opened at open.
func member(b []byte, open int, name, v string) []byte {
	if v == "" {
		return b
	}
	if len(b) > open {
		b = append(b, ',')
	}
	return jsonenc.String(append(b, name...), v)
}
