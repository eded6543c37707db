package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// run is one call a replica runs for a task, from Start until its call
// ends. One goroutine (loop) owns the call; the record is changed through
// the backend only, so another replica's cancellation or answers reach it
// the same way as this replica's.
type run struct {
	m      *Manager
	id     string
	spec   Spec
	ttl    time.Duration
	cancel context.CancelCauseFunc
	// first hands the first answer to Start while no task exists.
	first chan Answer
	// wake tells loop to read its record again (answers arrived).
	wake chan struct{}
	// done is closed when the call ended.
	done chan struct{}

	mu     sync.Mutex
	task   bool // the record exists; answers go to it, not to first
	held   bool
	why    string
	expiry *time.Timer
	round  int
}

// ID implements Handle.
func (r *run) ID() string { return r.id }

// TTL is how long the task lives from its creation: a task the call
// makes of its own (a child's, package proxy) need not outlive it.
func (r *run) TTL() time.Duration { return r.ttl }

// Hold implements Handle.
func (r *run) Hold(why string) func() {
	r.setHeld(true, why)
	var once sync.Once
	return func() { once.Do(func() { r.setHeld(false, "") }) }
}

func (r *run) setHeld(held bool, why string) {
	r.mu.Lock()
	r.held, r.why = held, why
	task := r.task
	r.mu.Unlock()
	if !task {
		return
	}
	now := r.m.now()
	r.change(func(rec *Record) bool {
		if rec.Status.Terminal() {
			return false
		}
		rec.Held, rec.Message, rec.Updated = held, why, now
		return true
	})
}

// record is the run's task as first stored.
func (r *run) record() *Record {
	now := r.m.now()
	return &Record{ID: r.id, Owner: r.spec.Owner, Tool: r.spec.Tool, Era: r.spec.Era, Status: Working,
		Held: r.held, Message: r.why, Created: now, Updated: now,
		TTLMs: r.ttl.Milliseconds(), PollMs: r.m.set.Poll.Milliseconds(), Runner: r.m.replica, Beat: now}
}

// becomeTask makes the run a task: stored, then answered to.
func (r *run) becomeTask(ctx context.Context) (*Record, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.becomeTaskLocked(ctx)
}

func (r *run) becomeTaskLocked(ctx context.Context) (*Record, error) {
	rec := r.record()
	if err := r.m.store().Create(ctx, rec); err != nil {
		return nil, fmt.Errorf("cannot store the task: %w", err)
	}
	r.task = true
	// Past its ttl the task may be gone, and its result with it: the
	// call is stopped then.
	r.expiry = time.AfterFunc(r.ttl, func() { r.cancel(errExpired) })
	r.m.beat()
	return rec, nil
}

// loop runs the call, round by round, and records how it ended.
func (r *run) loop(ctx context.Context, step Step) {
	defer r.end()
	ans := step(ctx, r, nil)
	if r.handOver(ans) {
		return
	}
	for {
		if cause := context.Cause(ctx); cause != nil {
			r.stopped(cause)
			return
		}
		if ans.Input == nil {
			r.finish(ans)
			return
		}
		in, ok := r.ask(ctx, ans)
		if !ok {
			r.stopped(context.Cause(ctx))
			return
		}
		ans = step(ctx, r, in)
	}
}

// handOver gives the first answer to Start while no task exists.
func (r *run) handOver(ans Answer) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.task {
		return false
	}
	r.first <- ans
	return true
}

// end forgets the run.
func (r *run) end() {
	r.mu.Lock()
	if r.expiry != nil {
		r.expiry.Stop()
	}
	r.mu.Unlock()
	close(r.done)
	r.cancel(nil)
	r.m.release(r)
}

// finish records the call's answer, unless the task ended meanwhile (a
// cancellation wins).
func (r *run) finish(ans Answer) {
	now := r.m.now()
	r.change(func(rec *Record) bool {
		if rec.Status.Terminal() {
			return false
		}
		applyAnswer(rec, ans, r.m.set.MaxResult, now)
		return true
	})
}

// stopped records why the call stopped before it answered: a client's
// cancellation and the end of the ttl need no record (the task is
// cancelled, or gone); anything else fails the task saying why.
func (r *run) stopped(cause error) {
	if cause == nil || errors.Is(cause, errCancelled) || errors.Is(cause, errExpired) {
		return
	}
	now := r.m.now()
	r.change(func(rec *Record) bool {
		if rec.Status.Terminal() {
			return false
		}
		fail(rec, jsonrpc.CodeInternalError, cause.Error(), now)
		return true
	})
}

// ask records a round of input requests and waits until the client
// answered all of them (through any replica), the task ended, or ctx
// did. Keys are unique over the task's life: a call that asks again
// under the same key is asked under a new one.
func (r *run) ask(ctx context.Context, ans Answer) (*Input, bool) {
	r.round++
	prefix := fmt.Sprintf("r%d.", r.round)
	input := make(map[string]json.RawMessage, len(ans.Input))
	for k, v := range ans.Input {
		input[prefix+k] = v
	}
	now := r.m.now()
	r.change(func(rec *Record) bool {
		if rec.Status.Terminal() {
			return false
		}
		rec.Status, rec.Input, rec.Answers = InputRequired, input, nil
		rec.Held, rec.Message, rec.Updated = false, "", now
		return true
	})
	poll := min(r.m.set.Poll, 500*time.Millisecond)
	for {
		rec, err := r.m.store().Load(context.WithoutCancel(ctx), r.id)
		if err != nil || rec.Status.Terminal() {
			return nil, false
		}
		if rec.Status == Working && len(rec.Input) == 0 {
			in := &Input{State: ans.State, Responses: map[string]json.RawMessage{}}
			for k, v := range rec.Answers {
				if key, ok := strings.CutPrefix(k, prefix); ok {
					in.Responses[key] = v
				}
			}
			r.change(func(rec *Record) bool { rec.Answers = nil; return true })
			return in, true
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false
		case <-r.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// refresh says this replica still runs the task, and stops the call when
// the task was cancelled (or expired) through another replica.
func (r *run) refresh() {
	r.mu.Lock()
	task := r.task
	r.mu.Unlock()
	if !task {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.m.beatEvery)
	defer cancel()
	now := r.m.now()
	rec, err := r.m.store().Update(ctx, r.id, func(rec *Record) bool {
		if rec.Status.Terminal() {
			return false
		}
		rec.Beat = now
		return true
	})
	switch {
	case errors.Is(err, ErrNotFound):
		r.cancel(errExpired)
	case err != nil:
		r.m.log.Warn("[EVOKORE] Cannot refresh a task's heartbeat", "task", r.id, "err", err)
	case rec.Status.Terminal():
		r.cancel(errCancelled)
	case rec.Status == Working && len(rec.Answers) > 0:
		r.poke()
	}
}

func (r *run) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// change updates the run's record by fn and tells Notify when its status
// changed.
func (r *run) change(fn func(*Record) bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var before Record
	changed := false
	rec, err := r.m.store().Update(ctx, r.id, func(rec *Record) bool {
		before = Record{Status: rec.Status, Held: rec.Held, Message: rec.Message}
		changed = fn(rec)
		return changed
	})
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			r.m.log.Warn("[EVOKORE] Cannot record a task's change", "task", r.id, "err", err)
		}
		return
	}
	if changed && (before.Status != rec.Status || before.Held != rec.Held || before.Message != rec.Message) {
		r.notify(rec)
	}
}

// notify tells the task's client of its new state, best effort.
func (r *run) notify(rec *Record) {
	if r.spec.Notify != nil {
		r.spec.Notify(rec)
	}
}
