package tasks

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Step runs a task's call, or its next round: in is nil the first time,
// then the client's answers to the input the previous answer asked for. h
// is the task the call runs as, for a stage that waits for a person.
type Step func(ctx context.Context, h Handle, in *Input) Answer

// Handle is what a running call sees of its task.
type Handle interface {
	// ID is the task's id.
	ID() string
	// Hold marks the task as waiting for a person's decision (why says
	// what it waits for) until the function returned is called.
	Hold(why string) (resume func())
}

// Input are a client's answers to one round's input requests, keyed as
// the call asked them, with the state the call gave with them.
type Input struct {
	State     string
	Responses map[string]json.RawMessage
}

// Answer is how a call, or one round of it, ended: a result, a JSON-RPC
// error, or input requests (input_required).
type Answer struct {
	// Result is the call's result as its client gets it; IsError whether
	// it reports a tool error.
	Result  json.RawMessage
	IsError bool
	// Error is the JSON-RPC error the call answered.
	Error *jsonrpc.Error
	// Input are the requests of a call that asks for input; State is
	// the requestState that goes back with the answers.
	Input map[string]json.RawMessage
	State string
}

// Spec is a task to start.
type Spec struct {
	// Owner is who may see the task; Tool the name it was called under;
	// Era the protocol era of its client.
	Owner, Tool, Era string
	// TTL is the lifetime the client asked for; zero or more than
	// Settings.TTL is Settings.TTL.
	TTL time.Duration
	// After is how long the first answer may take to be answered
	// directly: negative makes a task at once (the client asked for
	// one), zero is Settings.After.
	After time.Duration
	// Wrap keeps a first answer that came in time as a task all the same
	// (a tool that runs only as a task), unless it asks for input.
	Wrap bool
	// Notify, when set, is told of every change of the task's status,
	// from the replica that runs it.
	Notify func(*Record)
}

// ErrBusy refuses a task to a caller that runs Settings.MaxRunning
// already.
var ErrBusy = errors.New("too many tasks running for this caller")

// errClosed refuses tasks once the manager closed.
var errClosed = errors.New("evokore is shutting down")

// Why a run stops before its call answered.
var (
	errCancelled = errors.New("the task was cancelled")
	errExpired   = errors.New("the task outlived its ttl")
	errShutdown  = errors.New("evokore shut down while the task ran; call the tool again")
)

// How often a replica says it still runs its tasks, and how long a task
// whose runner said nothing stays working before a reader fails it.
const (
	beatEvery  = 2 * time.Second
	staleAfter = 10 * time.Second
)

// Manager runs a replica's tasks and answers for every task in its
// backend. Its zero value is not usable; see New.
type Manager struct {
	set     Settings
	replica string
	log     *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	// beatEvery and staleAfter are the constants of the same names;
	// tests shorten them before the first task.
	beatEvery, staleAfter time.Duration

	mu      sync.Mutex
	backend Backend
	runs    map[string]*run
	owners  map[string]int
	closed  bool
	beating bool
	stop    chan struct{}
}

// New is a manager of tasks bounded by set, kept in memory until Use
// gives it another backend. It starts nothing.
func New(set Settings, log *slog.Logger) *Manager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{set: set.withDefaults(), replica: rand.Text(), log: log, backend: NewMemory(),
		runs: map[string]*run{}, owners: map[string]int{}, stop: make(chan struct{}),
		beatEvery: beatEvery, staleAfter: staleAfter}
}

// Use makes b the backend, before any task was made (the shared store is
// reached at start).
func (m *Manager) Use(b Backend) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.backend = b
}

// Settings are the manager's bounds.
func (m *Manager) Settings() Settings { return m.set }

func (m *Manager) store() Backend {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.backend
}

func (m *Manager) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Start runs step for spec's caller. It returns the task when the call
// became one, or the call's answer when it answered within spec.After
// (and is not to be wrapped): exactly one of the two. The task is stored
// before Start returns it. ErrBusy refuses a caller at its bound.
func (m *Manager) Start(ctx context.Context, spec Spec, step Step) (*Record, *Answer, error) {
	ttl := spec.TTL
	if ttl <= 0 || ttl > m.set.TTL {
		ttl = m.set.TTL
	}
	after := spec.After
	if after == 0 {
		after = m.set.After
	}
	r := &run{m: m, id: rand.Text(), spec: spec, ttl: ttl, first: make(chan Answer, 1), wake: make(chan struct{}, 1), done: make(chan struct{})}
	if err := m.admit(r); err != nil {
		return nil, nil, err
	}
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	r.cancel = cancel
	if after < 0 {
		rec, err := r.becomeTask(ctx)
		if err != nil {
			m.release(r)
			cancel(err)
			return nil, nil, err
		}
		go r.loop(rctx, step)
		return rec, nil, nil
	}
	go r.loop(rctx, step)
	timer := time.NewTimer(after)
	defer timer.Stop()
	select {
	case ans := <-r.first:
		return m.direct(ctx, r, ans)
	case <-timer.C:
	}
	r.mu.Lock()
	var early *Answer
	select {
	case ans := <-r.first:
		// It answered as the time ran out.
		early = &ans
	default:
	}
	var rec *Record
	var err error
	if early == nil {
		rec, err = r.becomeTaskLocked(ctx)
	}
	r.mu.Unlock()
	switch {
	case early != nil:
		return m.direct(ctx, r, *early)
	case err != nil:
		// The call goes on without a task: its answer would reach no
		// one, so stop it.
		m.release(r)
		cancel(err)
		return nil, nil, err
	}
	return rec, nil, nil
}

// direct ends a run whose first answer came in time: the answer itself,
// or, for a task wrapped all the same, a task already ended.
func (m *Manager) direct(ctx context.Context, r *run, ans Answer) (*Record, *Answer, error) {
	if !r.spec.Wrap || ans.Input != nil {
		m.release(r)
		return nil, &ans, nil
	}
	rec := r.record()
	applyAnswer(rec, ans, m.set.MaxResult, m.now())
	err := m.store().Create(ctx, rec)
	m.release(r)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot store the task: %w", err)
	}
	return rec, nil, nil
}

// admit counts r against its owner's bound.
func (m *Manager) admit(r *run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errClosed
	}
	if m.owners[r.spec.Owner] >= m.set.MaxRunning {
		return fmt.Errorf("%w (%d): wait for one to end, or cancel one", ErrBusy, m.set.MaxRunning)
	}
	m.owners[r.spec.Owner]++
	m.runs[r.id] = r
	return nil
}

// release forgets a run that ended.
func (m *Manager) release(r *run) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.runs[r.id]; !ok {
		return
	}
	delete(m.runs, r.id)
	if m.owners[r.spec.Owner]--; m.owners[r.spec.Owner] <= 0 {
		delete(m.owners, r.spec.Owner)
	}
}

// beat starts the heartbeat once a task runs here.
func (m *Manager) beat() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.beating || m.closed {
		return
	}
	m.beating = true
	go m.beatLoop()
}

// beatLoop refreshes the heartbeat of the tasks this replica runs, and
// passes on to them what other replicas stored: a cancellation, the
// client's answers.
func (m *Manager) beatLoop() {
	t := time.NewTicker(m.beatEvery)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		m.mu.Lock()
		runs := make([]*run, 0, len(m.runs))
		for _, r := range m.runs {
			runs = append(runs, r)
		}
		m.mu.Unlock()
		for _, r := range runs {
			r.refresh()
		}
	}
}

// load is the owner's task id, failing it first when its runner stopped.
func (m *Manager) load(ctx context.Context, owner, id string) (*Record, error) {
	rec, err := m.store().Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if rec.Owner != owner {
		return nil, ErrNotFound
	}
	if rec.Status.Terminal() || !m.abandoned(rec) {
		return rec, nil
	}
	return m.store().Update(ctx, id, func(r *Record) bool {
		if r.Status.Terminal() || !m.abandoned(r) {
			return false
		}
		fail(r, jsonrpc.CodeInternalError, "the evokore process running this task stopped before it ended (a restart or a crash); call the tool again", m.now())
		return true
	})
}

// abandoned reports whether nobody runs rec any more: this replica has no
// run for it, or another replica stopped saying it runs it.
func (m *Manager) abandoned(rec *Record) bool {
	if rec.Runner == m.replica {
		m.mu.Lock()
		_, ok := m.runs[rec.ID]
		m.mu.Unlock()
		return !ok
	}
	return m.now().Sub(rec.Beat) > m.staleAfter
}

// Get returns owner's task id, or ErrNotFound.
func (m *Manager) Get(ctx context.Context, owner, id string) (*Record, error) {
	return m.load(ctx, owner, id)
}

// List returns owner's tasks, newest first.
func (m *Manager) List(ctx context.Context, owner string) ([]*Record, error) {
	recs, err := m.store().List(ctx, owner)
	if err != nil {
		return nil, err
	}
	for i, rec := range recs {
		if !rec.Status.Terminal() && m.abandoned(rec) {
			if r, err := m.load(ctx, owner, rec.ID); err == nil {
				recs[i] = r
			}
		}
	}
	return recs, nil
}

// Wait returns owner's task id once it ended, or when ctx ends (with
// ctx's error).
func (m *Manager) Wait(ctx context.Context, owner, id string) (*Record, error) {
	poll := min(m.set.Poll, 500*time.Millisecond)
	for {
		rec, err := m.load(ctx, owner, id)
		if err != nil || rec.Status.Terminal() {
			return rec, err
		}
		var done <-chan struct{}
		m.mu.Lock()
		if r, ok := m.runs[id]; ok {
			done = r.done
		}
		m.mu.Unlock()
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
}

// Answer gives owner's task id the client's responses to its outstanding
// input requests; responses to keys not outstanding are ignored. Once
// every request is answered, the task works again. It returns the task
// as stored after.
func (m *Manager) Answer(ctx context.Context, owner, id string, responses map[string]json.RawMessage) (*Record, error) {
	if _, err := m.load(ctx, owner, id); err != nil {
		return nil, err
	}
	now := m.now()
	rec, err := m.store().Update(ctx, id, func(r *Record) bool {
		if r.Owner != owner || r.Status != InputRequired {
			return false
		}
		changed := false
		for k, v := range responses {
			if _, ok := r.Input[k]; !ok {
				continue
			}
			if r.Answers == nil {
				r.Answers = map[string]json.RawMessage{}
			}
			r.Answers[k] = v
			delete(r.Input, k)
			changed = true
		}
		if changed {
			r.Updated = now
			if len(r.Input) == 0 {
				r.Status = Working
			}
		}
		return changed
	})
	if err != nil {
		return nil, err
	}
	m.poke(id)
	return rec, nil
}

// Cancel cancels owner's task id: it is cancelled at once (unless it had
// ended: terminal reports that) and its call is stopped, here or by the
// replica that runs it.
func (m *Manager) Cancel(ctx context.Context, owner, id string) (rec *Record, terminal bool, err error) {
	if _, err := m.load(ctx, owner, id); err != nil {
		return nil, false, err
	}
	now := m.now()
	rec, err = m.store().Update(ctx, id, func(r *Record) bool {
		terminal = r.Status.Terminal()
		if r.Owner != owner || terminal {
			return false
		}
		r.Status, r.Message, r.Held = Cancelled, "The task was cancelled by request.", false
		r.Input, r.Answers = nil, nil
		r.Updated = now
		return true
	})
	if err != nil {
		return nil, false, err
	}
	m.mu.Lock()
	run := m.runs[id]
	m.mu.Unlock()
	if run != nil && !terminal {
		run.notify(rec)
		run.cancel(errCancelled)
	}
	return rec, terminal, nil
}

// poke wakes the local run of id, if any, to read its record again.
func (m *Manager) poke(id string) {
	m.mu.Lock()
	r := m.runs[id]
	m.mu.Unlock()
	if r != nil {
		r.poke()
	}
}

// Close refuses new tasks and fails the ones this replica still runs,
// saying why, then stops them. Later calls do nothing.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	close(m.stop)
	runs := make([]*run, 0, len(m.runs))
	for _, r := range m.runs {
		runs = append(runs, r)
	}
	m.mu.Unlock()
	for _, r := range runs {
		r.stopped(errShutdown)
		r.cancel(errShutdown)
	}
}

// applyAnswer records how the call ended.
func applyAnswer(rec *Record, ans Answer, maxResult int, now time.Time) {
	rec.Held, rec.Input, rec.Answers = false, nil, nil
	rec.Updated = now
	switch {
	case ans.Error != nil:
		fail(rec, ans.Error.Code, ans.Error.Message, now)
		if len(ans.Error.Data) > 0 {
			rec.Error, _ = json.Marshal(ans.Error)
		}
	case len(ans.Result) > maxResult:
		fail(rec, jsonrpc.CodeInternalError, fmt.Sprintf("the result is %d bytes, over the %d a task keeps (EVOKORE_TASK_MAX_RESULT_BYTES); call the tool without a task", len(ans.Result), maxResult), now)
	default:
		rec.Status, rec.Message = Completed, ""
		rec.Result, rec.IsError = ans.Result, ans.IsError
	}
}

// fail makes rec a failed task with the JSON-RPC error code and message.
func fail(rec *Record, code int64, message string, now time.Time) {
	rec.Status, rec.Message, rec.Held = Failed, message, false
	rec.Input, rec.Answers, rec.Result = nil, nil, nil
	rec.Error, _ = json.Marshal(&jsonrpc.Error{Code: code, Message: message})
	rec.Updated = now
}
