package events

import (
	"strconv"

	"github.com/evokore/evokore/internal/jsonenc"
)

// AppendJSON appends e as json.Marshal writes it, without reflection:
// the audit log writes a line per tool call. Args are copied as they
// stand (package redact writes them as Marshal would). ok is false when
// Marshal would fail (a time beyond year 9999, a latency that is not a
// number); dst is then returned as it was.
func AppendJSON(dst []byte, e Event) (out []byte, ok bool) {
	b := append(dst, `{"ts":`...)
	if b, ok = jsonenc.Time(b, e.Time); !ok {
		return dst, false
	}
	b = jsonenc.String(append(b, `,"eventType":`...), e.Type)
	b = field(b, `,"sessionId":`, e.Session)
	if b, ok = AppendMembers(b, e, true); !ok {
		return dst, false
	}
	return append(b, '}'), true
}

// AppendMembers appends e's members from tenantId on, each after a comma,
// as AppendJSON writes them (withOutcome: the outcome too, which the
// audit log writes in its own place). ok is false when the latency is not
// a number.
func AppendMembers(b []byte, e Event, withOutcome bool) (out []byte, ok bool) {
	b = field(b, `,"tenantId":`, e.Tenant)
	b = field(b, `,"role":`, e.Role)
	b = field(b, `,"transport":`, e.Transport)
	b = field(b, `,"client":`, e.Client)
	b = field(b, `,"tool":`, e.Tool)
	b = field(b, `,"server":`, e.Server)
	b = field(b, `,"source":`, e.Source)
	b = field(b, `,"runId":`, e.Run)
	if withOutcome {
		b = field(b, `,"outcome":`, e.Outcome)
	}
	if e.LatencyMs != nil {
		if b, ok = jsonenc.Float(append(b, `,"latencyMs":`...), *e.LatencyMs); !ok {
			return b, false
		}
	}
	if len(e.Args) > 0 {
		b = append(append(b, `,"args":`...), e.Args...)
	}
	b = field(b, `,"approvalId":`, e.Approval)
	b = field(b, `,"mode":`, e.Mode)
	b = field(b, `,"detail":`, e.Detail)
	b = field(b, `,"remote":`, e.Remote)
	if e.Pid != 0 {
		b = strconv.AppendInt(append(b, `,"pid":`...), int64(e.Pid), 10)
	}
	return b, true
}

// field appends an omitempty string member.
func field(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	return jsonenc.String(append(b, name...), v)
}
