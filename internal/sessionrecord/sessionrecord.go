// Package sessionrecord records the router's own MCP sessions under
// EVOKORE_HOME/sessions, so session replay and the analytics natives
// (session_analyze_replay, session_work_ratio, session_trust_report) work
// for any MCP client, with or without Claude Code hooks:
//
//   - <sid>-replay.jsonl gets one replay.Entry per tool call (the line
//     format the session-replay hook writes, with source "router" and the
//     latency): the tool, a summary of the redacted arguments, ok or
//     error, the start of the answer (redacted);
//   - <sid>-trust.json is the session's trust ledger, one agent: the
//     client (its initialize name, else "main"). Its score is
//     (ok + 1) / (ok + errors + 2 × refused + 2): a session starts
//     Standard at 0.5, calls that work raise it towards 1, failures lower
//     it, and calls the policy refused (denied, held, rate-limited,
//     waiting for approval) weigh twice. Tiers are the analytics ones
//     (Trusted ≥ 0.8, Standard ≥ 0.5, Probation ≥ 0.3, else Untrusted).
//
// Files are written by one goroutine from a bounded queue (package
// batchq), so recording never holds up a call: each batch is one append
// per session and one ledger save, within batchq.Linger of its first
// call. A full queue drops the newest records and counts them.
package sessionrecord

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/evokore/evokore/internal/batchq"
	"github.com/evokore/evokore/internal/redact"
	"github.com/evokore/evokore/internal/replay"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/statefile"
)

const (
	queueSize = 4096
	batchSize = 256
	// ledgerEvery is how often at most a session's trust ledger is
	// rewritten: each save is a synced atomic replace, which cost more
	// than the calls it counts when done per batch.
	ledgerEvery = time.Second
)

// Recorder is the router.Observer that records sessions.
type Recorder struct {
	home  string
	scrub *redact.Scrubber
	log   *slog.Logger
	now   func() time.Time

	queue *batchq.Queue[record]
	// flushAsked is set by the flush timer for the writer.
	flushAsked atomic.Bool

	// Owned by the writer goroutine: the trust ledgers, those changed
	// since they were saved, when they were saved, whether a flush is
	// due, and whether writes are failing (logged once).
	ledgers    map[string]*ledger
	dirty      map[string]bool
	uses       uint64
	savedAt    time.Time
	flushDue   bool
	flushTimer *time.Timer
	failing    bool
}

type record struct {
	sid, agent string
	// home is where the session's tenant keeps its records
	// (session.TenantHome): the analytics natives of another tenant never
	// read them.
	home    string
	entry   replay.Entry
	refused bool
	// flush marks the record a timer sends to save the changed ledgers.
	flush bool
}

// New returns a recorder writing under home; its writer starts with the
// first record.
func New(home string, scrub *redact.Scrubber, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{home: home, scrub: scrub, log: log, now: time.Now, ledgers: map[string]*ledger{}, dirty: map[string]bool{}}
	r.queue = batchq.New(queueSize, batchSize, batchq.Linger, r.write)
	return r
}

var _ router.Observer = (*Recorder)(nil)

// Observe records a call, refused or run.
func (r *Recorder) Observe(_ context.Context, o router.Outcome) {
	c := o.Call
	if c.Session == nil {
		return
	}
	var latency *int64
	if !o.Refused {
		ms := r.now().Sub(c.Started).Milliseconds()
		latency = &ms
	}
	outcome, output := replay.OutcomeOK, ""
	switch {
	case o.Err != nil:
		outcome, output = replay.OutcomeError, o.Err.Error()
	case o.Result != nil:
		output = ResultText(o)
		if o.Result.IsError {
			outcome = replay.OutcomeError
		}
	}
	refused := o.Refused
	if refused {
		outcome = replay.OutcomeError
	}
	now := r.now()
	args := r.scrub.Call(c, c.Args)
	e := replay.Entry{
		TS:        replay.Timestamp(now),
		Tool:      c.Entry.Name,
		Summary:   summary(args),
		Outcome:   outcome,
		Output:    args.Scrubber.Bounded(output, 4*replay.MaxOutput),
		LatencyMS: latency,
		Source:    "router",
		Run:       c.Run,
	}
	if !c.Started.IsZero() {
		e.InvocationTS = replay.Timestamp(c.Started)
	} else {
		e.InvocationTS = e.TS
	}
	agent := "main"
	if p := c.Session.Peer; p != nil {
		if ip := p.InitializeParams(); ip != nil && ip.ClientInfo != nil && strings.TrimSpace(ip.ClientInfo.Name) != "" {
			agent = ip.ClientInfo.Name
		}
	}
	r.queue.Offer(record{sid: c.Session.ID, home: session.TenantHome(r.home, c.Session.Identity.Tenant), agent: agent, entry: e, refused: refused})
}

// summary is what a replay line says the call was about.
func summary(args *redact.CallArgs) string {
	if args.Unreadable > 0 {
		// Arguments that are not an object are recorded by their size,
		// a number Summarize does not print.
		return replay.Summarize(map[string]any{"_unreadable_bytes": args.Unreadable})
	}
	return replay.SummarizeJSON(args.Redacted)
}

// Dropped reports how many records a full queue dropped.
func (r *Recorder) Dropped() int64 { return r.queue.Dropped() }

// Close writes what is queued, saves the ledgers, and stops.
func (r *Recorder) Close() {
	r.queue.Close()
	// The writer has stopped: its state is ours now.
	if r.flushTimer != nil {
		r.flushTimer.Stop()
	}
	r.saveLedgers()
}

// write appends a batch to the sessions' replay files, one write per
// session, and saves the changed ledgers when the last save is
// ledgerEvery old (else a timer asks for it then).
func (r *Recorder) write(batch []record) {
	if r.flushAsked.Swap(false) {
		r.flushDue = false // the timer fired: whatever is dirty is due
	}
	var order []string
	entries := map[string][]replay.Entry{}
	homes := map[string]string{}
	for _, rec := range batch {
		if rec.flush {
			continue
		}
		if _, ok := entries[rec.sid]; !ok {
			order = append(order, rec.sid)
			homes[rec.sid] = rec.home
		}
		entries[rec.sid] = append(entries[rec.sid], rec.entry)
	}
	written := map[string]bool{}
	for _, sid := range order {
		if err := replay.Append(homes[sid], sid, entries[sid]...); err != nil {
			r.fail(err)
			continue
		}
		r.failing = false
		written[sid] = true
	}
	for _, rec := range batch {
		if !rec.flush && written[rec.sid] {
			r.tally(rec)
			r.dirty[rec.sid] = true
		}
	}
	if len(r.dirty) == 0 {
		return
	}
	if wait := ledgerEvery - r.now().Sub(r.savedAt); wait > 0 {
		if !r.flushDue {
			r.flushDue = true
			if r.flushTimer == nil {
				r.flushTimer = time.AfterFunc(wait, r.askFlush)
			} else {
				r.flushTimer.Reset(wait)
			}
		}
		return
	}
	r.saveLedgers()
}

// askFlush runs on the flush timer: it marks the ledgers due and wakes
// the writer with an empty record. A full queue needs no waking (the
// writer is about to run anyway) and a closed one is saved by Close.
func (r *Recorder) askFlush() {
	r.flushAsked.Store(true)
	r.queue.Offer(record{flush: true})
}

// saveLedgers saves the ledgers changed since their last save, then
// lets go of the least used ones past ledgersKept.
func (r *Recorder) saveLedgers() {
	for sid := range r.dirty {
		r.saveLedger(sid)
		delete(r.dirty, sid)
	}
	r.savedAt = r.now()
	if len(r.ledgers) > ledgersKept {
		r.trim()
	}
}

// ledgersKept bounds the ledgers held in memory: a router serving
// sessions for weeks would otherwise hold one for every session it ever
// saw. A ledger let go is read back from its file when its session calls
// again, so its counts go on where they were.
var ledgersKept = 1024

// trim keeps the three quarters of ledgersKept used last (so the sort
// runs once per quarter of them, not at every save). Every ledger is
// saved when it runs.
func (r *Recorder) trim() {
	all := slices.SortedFunc(maps.Values(r.ledgers), func(a, b *ledger) int { return cmp.Compare(b.used, a.used) })
	for _, l := range all[ledgersKept*3/4:] {
		delete(r.ledgers, l.sid)
	}
}

// tally counts rec in its session's ledger.
func (r *Recorder) tally(rec record) {
	l := r.ledgers[rec.sid]
	if l == nil {
		l = loadLedger(rec.home, rec.sid)
		r.ledgers[rec.sid] = l
	}
	r.uses++
	l.used = r.uses
	t := l.agents[rec.agent]
	if t == nil {
		t = &tally{}
		l.agents[rec.agent] = t
		l.order = append(l.order, rec.agent)
	}
	switch {
	case rec.refused:
		t.refused++
	case rec.entry.Outcome == replay.OutcomeOK:
		t.ok++
	default:
		t.errors++
	}
	t.last = rec.entry.TS
}

func (r *Recorder) fail(err error) {
	if !r.failing {
		r.log.Warn("[EVOKORE] Cannot record the session", "dir", replay.SessionsDir(r.home), "err", err)
	}
	r.failing = true
}

// ledger is one session's trust ledger.
type ledger struct {
	sid    string
	home   string
	agents map[string]*tally
	order  []string
	// used orders the ledgers by their last record (Recorder.uses).
	used uint64
}

// maxLedgerFile bounds the ledger file read back: one agent's entry is
// about 200 bytes.
const maxLedgerFile = 1 << 20

// loadLedger is the session's ledger as its file left it (a session let
// go by trim, or one resumed after a restart), else an empty one. The
// file is under EVOKORE_HOME, so it is read as any input: an unreadable
// or malformed one starts the ledger afresh rather than stop recording.
func loadLedger(home, sid string) *ledger {
	l := &ledger{sid: sid, home: home, agents: map[string]*tally{}}
	b, err := safefile.Load(replay.SessionFile(home, sid, "-trust.json"), maxLedgerFile)
	if err != nil {
		return l
	}
	var doc struct {
		Agents json.RawMessage `json:"agents"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return l
	}
	// The agents object's order is the ledger's (first seen first), so
	// its keys are read in turn rather than into a map.
	dec := json.NewDecoder(bytes.NewReader(doc.Agents))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return l
	}
	for dec.More() {
		key, err := dec.Token()
		id, ok := key.(string)
		var a agentDoc
		if err != nil || !ok || dec.Decode(&a) != nil || a.OK < 0 || a.Errors < 0 || a.Refused < 0 {
			return &ledger{sid: sid, home: home, agents: map[string]*tally{}}
		}
		if l.agents[id] == nil {
			l.order = append(l.order, id)
		}
		l.agents[id] = &tally{ok: a.OK, errors: a.Errors, refused: a.Refused, last: a.LastUpdated}
	}
	return l
}

type tally struct {
	ok, errors, refused int
	last                string
}

// Score is the trust score of a tally (see the package doc), rounded to
// two decimals.
func Score(ok, errors, refused int) float64 {
	s := float64(ok+1) / float64(ok+errors+2*refused+2)
	return math.Round(s*100) / 100
}

type agentDoc struct {
	AgentID     string  `json:"agentId"`
	Score       float64 `json:"score"`
	Tier        string  `json:"tier"`
	LastUpdated string  `json:"lastUpdated"`
	Events      int     `json:"events"`
	OK          int     `json:"ok"`
	Errors      int     `json:"errors"`
	Refused     int     `json:"refused"`
}

func (r *Recorder) saveLedger(sid string) {
	l := r.ledgers[sid]
	// The ledger's agents are an object keyed by agent id, in first-seen
	// order: encoding/json would sort a map, so it is written by hand.
	var b strings.Builder
	fmt.Fprintf(&b, "{\n  \"sessionId\": %q,\n  \"source\": \"router\",\n  \"agents\": {", sid)
	for i, id := range l.order {
		t := l.agents[id]
		score := Score(t.ok, t.errors, t.refused)
		doc := agentDoc{AgentID: id, Score: score, Tier: replay.TrustTier(score), LastUpdated: t.last,
			Events: t.ok + t.errors + t.refused, OK: t.ok, Errors: t.errors, Refused: t.refused}
		sep := ","
		if i == len(l.order)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "\n    %s: %s%s", quoteJSON(id), mustJSON(doc), sep)
	}
	fmt.Fprintf(&b, "\n  },\n  \"updatedAt\": %q\n}\n", replay.Timestamp(r.now()))
	if err := statefile.WriteAtomic(replay.SessionFile(l.home, sid, "-trust.json"), []byte(b.String()), 0o600); err != nil {
		r.fail(err)
	}
}

func quoteJSON(s string) string { return string(mustJSON(s)) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`null`)
	}
	return b
}
