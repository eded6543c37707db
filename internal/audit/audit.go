// Package audit owns the audit log, EVOKORE_HOME/audit/audit.jsonl: one
// JSON object a line for every event the router records (package events:
// tool calls with their outcome, approvals, sessions and their role,
// quarantines, reloads, HTTP auth failures).
//
// The file is append-only and shared: several routers and CLIs may write
// it, each write under an exclusive lock (audit.jsonl.lock), so lines never
// interleave. It is rotated by size: once it has reached MaxBytes it
// becomes audit.jsonl.1 (the older ones shift up to .Keep, the oldest is
// removed), under the same lock. Files are created 0600 in a 0700
// directory.
//
// Writing never holds up a tool call: Handle queues the event and one
// goroutine writes batches (package batchq: lines reach the file within
// batchq.Linger). A full queue (a disk that stopped answering) drops the
// newest events and counts them; the count is written as an audit_dropped
// line as soon as the disk takes writes again.
//
// Each line leads with EVOKORE-MCP's audit fields and names (timestamp in
// Unix milliseconds, eventType, sessionId, actor, resource, outcome
// success|failure|denied, metadata), then evokore's own (line.go).
//
// Events arrive redacted (package redact); this package adds nothing that
// could carry a secret.
package audit

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/evokore/evokore/internal/batchq"
	"github.com/evokore/evokore/internal/events"
	"github.com/evokore/evokore/internal/replay"
)

// Defaults of a Log.
const (
	DefaultMaxBytes = 10 << 20
	DefaultKeep     = 5
	queueSize       = 4096
	batchSize       = 256
)

// Path is where the audit log of an EVOKORE_HOME lives.
func Path(home string) string { return filepath.Join(home, "audit", "audit.jsonl") }

// Options configure a Log.
type Options struct {
	Path string
	// MaxBytes is the size at which the file is rotated; Keep how many
	// rotated files are kept. Zero takes the defaults.
	MaxBytes int64
	Keep     int
	Log      *slog.Logger
}

// Log writes events to the audit file. Handle queues; Close drains.
type Log struct {
	opts  Options
	queue *batchq.Queue[events.Event]
	// Owned by the writer: failing is set while writes fail, so the
	// failure is logged once; reported is how many drops the file shows.
	failing  bool
	reported int64
	buf      []byte
	// failed counts the events a failed write lost.
	failed atomic.Int64
}

// Open returns a log writing to o.Path. Its writer starts with the first
// event: a router that records nothing runs no goroutine for it.
func Open(o Options) *Log {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Keep <= 0 {
		o.Keep = DefaultKeep
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	l := &Log{opts: o}
	l.queue = batchq.New(queueSize, batchSize, batchq.Linger, l.write)
	return l
}

var _ events.Sink = (*Log)(nil)

// Handle queues e for writing; it never blocks.
func (l *Log) Handle(e events.Event) { l.queue.Offer(e) }

// Dropped reports how many events were dropped: the queue was full, or
// the file refused them.
func (l *Log) Dropped() int64 { return l.queue.Dropped() + l.failed.Load() }

// Close writes what is queued and stops the writer.
func (l *Log) Close() { l.queue.Close() }

// appendLine appends e's line (line.go). An event that cannot be written
// leaves a line that says so.
func appendLine(buf []byte, e events.Event) []byte {
	if b, ok := appendAuditJSON(buf, e); ok {
		return append(b, '\n')
	}
	b, _ := appendAuditJSON(buf, events.Event{Time: time.Now().UTC().Truncate(time.Millisecond), Type: e.Type, Detail: "unencodable event"})
	return append(b, '\n')
}

// write appends a batch under the log's lock, rotating first when the
// file has reached MaxBytes (replay.AppendRotatingLines, the rotation
// every log under EVOKORE_HOME shares): one write, or one per
// writeChunk of a batch of big events.
func (l *Log) write(batch []events.Event) {
	buf := l.buf[:0]
	lost, from := 0, 0
	for i, e := range batch {
		buf = appendLine(buf, e)
		if len(buf) >= writeChunk && i < len(batch)-1 {
			// A batch of big events goes out in parts, so the buffer
			// kept between batches stays small.
			if !l.append(buf) {
				lost += i + 1 - from
			}
			from, buf = i+1, buf[:0]
		}
	}
	d := l.Dropped()
	if d > l.reported {
		buf = appendLine(buf, events.Event{Time: time.Now().UTC().Truncate(time.Millisecond), Type: "audit_dropped",
			Detail: strconv.FormatInt(d-l.reported, 10) + " events dropped: the audit queue was full", Pid: os.Getpid()})
	}
	if l.append(buf) {
		l.reported = d
	} else {
		lost += len(batch) - from
	}
	l.failed.Add(int64(lost))
	if cap(buf) <= 2*writeChunk {
		l.buf = buf
	}
}

// writeChunk is the size beyond which a batch is written in parts.
const writeChunk = 256 << 10

// append writes whole lines under the log's lock, logging the first of
// a run of failures.
func (l *Log) append(lines []byte) bool {
	if err := replay.AppendRotatingLines(l.opts.Path, lines, l.opts.MaxBytes, l.opts.Keep); err != nil {
		if !l.failing {
			l.opts.Log.Warn("[EVOKORE] Cannot write the audit log", "path", l.opts.Path, "err", err)
		}
		l.failing = true
		return false
	}
	l.failing = false
	return true
}

// Append writes one event at once, for a short-lived process that has no
// router's bus: the approvals command and the dashboard record the
// operator's decisions with it. It returns when the line is on disk.
func Append(o Options, e events.Event) {
	l := Open(o)
	bus := events.NewBus(nil, os.Getpid())
	bus.Add(l)
	bus.Emit(e)
	l.Close()
}

// OperatorDecision is the event of an operator's verdict on an approval,
// recorded where the operator gave it (the router records the verdict
// again when the held call is retried).
func OperatorDecision(id, verdict, where string) events.Event {
	t := events.ApprovalGranted
	if verdict != "approved" {
		t = events.ApprovalDenied
	}
	return events.Event{Type: t, Approval: id, Mode: "operator", Detail: "decided by the operator in " + where}
}
