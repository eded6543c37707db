// Package events is what the router tells operators about itself: one
// Event type for every record (tool calls, approvals, sessions,
// quarantines, reloads, auth failures) and a Bus that hands each event to
// its sinks (the audit log, webhooks).
//
// Events are built already redacted (package redact): a sink writes or
// sends what it is given and never sees a secret. Emit never blocks on a
// slow sink; each sink owns its own queue.
package events

import (
	"encoding/json"
	"sync"
	"time"
)

// Type names an event, as webhooks subscribe to it and the audit log's
// eventType field records it.
type Type string

// The events. tool_error, session_resumed and the plugin events are
// EVOKORE-MCP's names, kept so an existing webhook subscription still
// parses; approval_denied, quarantine, reload and auth_failure are new.
const (
	ToolCall          Type = "tool_call"
	ToolError         Type = "tool_error"
	ApprovalRequested Type = "approval_requested"
	ApprovalGranted   Type = "approval_granted"
	ApprovalDenied    Type = "approval_denied"
	SessionStart      Type = "session_start"
	SessionEnd        Type = "session_end"
	Quarantine        Type = "quarantine"
	Reload            Type = "reload"
	AuthFailure       Type = "auth_failure"
)

// Types lists every event evokore emits, in the order the docs list them.
var Types = []Type{ToolCall, ToolError, ApprovalRequested, ApprovalGranted, ApprovalDenied,
	SessionStart, SessionEnd, Quarantine, Reload, AuthFailure}

// Outcomes of a tool call.
const (
	OutcomeOK      = "ok"      // the tool ran and answered
	OutcomeError   = "error"   // the tool ran and failed (isError or a JSON-RPC error)
	OutcomeRefused = "refused" // a stage ended the call before it ran
)

// Event is one record. Fields that do not apply stay empty and are
// omitted from the JSON.
type Event struct {
	// Time is when it happened, UTC with milliseconds.
	Time time.Time `json:"ts"`
	Type Type      `json:"eventType"`
	// Session and Role say who acted; Transport is stdio or http.
	// Tenant is the session's tenant (session.Identity.Tenant, "" for
	// none): readers of the shared logs show a record to its tenant only.
	Session   string `json:"sessionId,omitempty"`
	Tenant    string `json:"tenantId,omitempty"`
	Role      string `json:"role,omitempty"`
	Transport string `json:"transport,omitempty"`
	Client    string `json:"client,omitempty"`
	// Tool, Server and Source locate a tool (source: native, proxy,
	// plugin).
	Tool   string `json:"tool,omitempty"`
	Server string `json:"server,omitempty"`
	Source string `json:"source,omitempty"`
	// Run is the run_code run a call belongs to (router.Call.Run): the
	// run's own call and each call its program made.
	Run string `json:"runId,omitempty"`
	// Outcome is ok, error or refused; LatencyMs is set for calls that
	// ran.
	Outcome   string   `json:"outcome,omitempty"`
	LatencyMs *float64 `json:"latencyMs,omitempty"`
	// Args are the call's arguments, redacted, as package redact writes
	// them (compact JSON, keys sorted, encoding/json's escapes): sinks
	// copy them as they are.
	Args json.RawMessage `json:"args,omitempty"`
	// Approval is the approval id (never a token); Mode how it is asked
	// (operator, elicitation, token).
	Approval string `json:"approvalId,omitempty"`
	Mode     string `json:"mode,omitempty"`
	// Detail is a short human text: the refusal, the error, the reload
	// summary, the auth failure's reason. Redacted.
	Detail string `json:"detail,omitempty"`
	// Remote is the client address of an HTTP auth failure.
	Remote string `json:"remote,omitempty"`
	// Pid is the router process that recorded the event.
	Pid int `json:"pid,omitempty"`
}

// Sink receives events. Handle must return quickly: a sink that does I/O
// queues the event and works on its own goroutine.
type Sink interface {
	Handle(e Event)
}

// Bus fans events out to sinks. A nil *Bus drops everything, so code
// paths that may run without one need no checks.
type Bus struct {
	mu    sync.RWMutex
	sinks []Sink
	now   func() time.Time
	pid   int
}

// NewBus returns a bus stamping events with now (nil: time.Now) and pid.
func NewBus(now func() time.Time, pid int) *Bus {
	if now == nil {
		now = time.Now
	}
	return &Bus{now: now, pid: pid}
}

// Add registers a sink; nil is ignored.
func (b *Bus) Add(s Sink) {
	if b == nil || s == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sinks = append(b.sinks, s)
}

// Listening reports whether any sink takes events, so a caller can skip
// building an event nobody reads (a tool call's redacted arguments).
func (b *Bus) Listening() bool {
	if b == nil {
		return false
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.sinks) > 0
}

// Emit stamps e (time, pid) and hands it to every sink.
func (b *Bus) Emit(e Event) {
	if b == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = b.now()
	}
	e.Time = e.Time.UTC().Truncate(time.Millisecond)
	if e.Pid == 0 {
		e.Pid = b.pid
	}
	b.mu.RLock()
	sinks := b.sinks
	b.mu.RUnlock()
	for _, s := range sinks {
		s.Handle(e)
	}
}
