package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func newManager(t *testing.T, set Settings) *Manager {
	t.Helper()
	m := New(set, nil)
	t.Cleanup(m.Close)
	return m
}

// quick answers at once; slow waits for release (or its context).
func quick(text string) Step {
	return func(context.Context, Handle, *Input) Answer {
		return Answer{Result: json.RawMessage(`{"content":[{"type":"text","text":"` + text + `"}]}`)}
	}
}

func slow(release <-chan struct{}, sawCancel *atomic.Bool) Step {
	return func(ctx context.Context, _ Handle, _ *Input) Answer {
		select {
		case <-release:
			return Answer{Result: json.RawMessage(`{"content":[{"type":"text","text":"done"}]}`)}
		case <-ctx.Done():
			if sawCancel != nil {
				sawCancel.Store(true)
			}
			return Answer{Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "request cancelled"}}
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A call that answers within After is answered directly; one that takes
// longer becomes a task, stored before Start returns, whose result the
// owner reads once it ended.
func TestQuickCallsAnswerSlowCallsBecomeTasks(t *testing.T) {
	m := newManager(t, Settings{After: 50 * time.Millisecond})
	ctx := context.Background()
	rec, ans, err := m.Start(ctx, Spec{Owner: "a", Tool: "t"}, quick("hi"))
	if err != nil || rec != nil || ans == nil || !strings.Contains(string(ans.Result), "hi") {
		t.Fatalf("quick call: task %v answer %+v err %v", rec, ans, err)
	}
	release := make(chan struct{})
	rec, ans, err = m.Start(ctx, Spec{Owner: "a", Tool: "t"}, slow(release, nil))
	if err != nil || rec == nil || ans != nil {
		t.Fatalf("slow call: task %v answer %+v err %v", rec, ans, err)
	}
	got, err := m.Get(ctx, "a", rec.ID)
	if err != nil || got.Status != Working {
		t.Fatalf("right after Start: %+v %v", got, err)
	}
	close(release)
	done, err := m.Wait(ctx, "a", rec.ID)
	if err != nil || done.Status != Completed || !strings.Contains(string(done.Result), "done") {
		t.Fatalf("after the call: %+v %v", done, err)
	}
	var d map[string]json.RawMessage
	if err := json.Unmarshal(done.Detailed(), &d); err != nil || string(d["resultType"]) != `"complete"` || d["result"] == nil || d["ttlMs"] == nil {
		t.Errorf("tasks/get (2026-07-28): %s", done.Detailed())
	}
	if !strings.Contains(string(done.LegacyResult()), `"io.modelcontextprotocol/related-task":{"taskId":"`+rec.ID+`"}`) {
		t.Errorf("tasks/result (2025-11-25): %s", done.LegacyResult())
	}
}

// A wrapped call is a task even when it answers at once; a call that asks
// for input in time is answered directly all the same (the client's
// round trip comes before any task).
func TestWrappedCallsAreTasksUnlessTheyAskFirst(t *testing.T) {
	m := newManager(t, Settings{After: time.Second})
	ctx := context.Background()
	rec, _, err := m.Start(ctx, Spec{Owner: "a", Wrap: true}, quick("x"))
	if err != nil || rec == nil || rec.Status != Completed {
		t.Fatalf("wrapped quick call: %+v %v", rec, err)
	}
	ask := func(context.Context, Handle, *Input) Answer {
		return Answer{Input: map[string]json.RawMessage{"name": json.RawMessage(`{"method":"elicitation/create"}`)}, State: "s"}
	}
	rec, ans, err := m.Start(ctx, Spec{Owner: "a", Wrap: true}, ask)
	if err != nil || rec != nil || ans == nil || ans.Input == nil {
		t.Fatalf("a call asking first: task %v answer %+v err %v", rec, ans, err)
	}
}

// Input rounds: the task shows its requests under keys unique to the
// round, keeps the ones not answered yet, and resumes the call with the
// answers under the call's own keys and its state.
func TestInputRoundsResumeOnceEveryRequestIsAnswered(t *testing.T) {
	m := newManager(t, Settings{After: 10 * time.Millisecond, Poll: 20 * time.Millisecond})
	ctx := context.Background()
	var got atomic.Pointer[Input]
	step := func(_ context.Context, _ Handle, in *Input) Answer {
		if in == nil {
			time.Sleep(50 * time.Millisecond)
			return Answer{Input: map[string]json.RawMessage{"a": json.RawMessage(`{}`), "b": json.RawMessage(`{}`)}, State: "st"}
		}
		got.Store(in)
		return Answer{Result: json.RawMessage(`{"content":[]}`)}
	}
	rec, _, err := m.Start(ctx, Spec{Owner: "o"}, step)
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	waitFor(t, "input_required", func() bool { r, _ := m.Get(ctx, "o", rec.ID); return r.Status == InputRequired })
	r, _ := m.Get(ctx, "o", rec.ID)
	if len(r.Input) != 2 || r.Input["r1.a"] == nil || r.Input["r1.b"] == nil {
		t.Fatalf("input requests: %v", r.Input)
	}
	if _, err := m.Answer(ctx, "o", rec.ID, map[string]json.RawMessage{"r1.a": json.RawMessage(`{"action":"accept"}`), "zzz": json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	r, _ = m.Get(ctx, "o", rec.ID)
	if r.Status != InputRequired || len(r.Input) != 1 || r.Input["r1.b"] == nil {
		t.Fatalf("after a partial answer: %s %v", r.Status, r.Input)
	}
	if _, err := m.Answer(ctx, "o", rec.ID, map[string]json.RawMessage{"r1.b": json.RawMessage(`{"action":"decline"}`)}); err != nil {
		t.Fatal(err)
	}
	done, _ := m.Wait(ctx, "o", rec.ID)
	in := got.Load()
	if done.Status != Completed || in == nil || in.State != "st" || len(in.Responses) != 2 || in.Responses["a"] == nil || in.Responses["b"] == nil {
		t.Fatalf("resumed with %+v, ended %s", in, done.Status)
	}
}

// Cancelling stops the call and the task stays cancelled; cancelling an
// ended task says it had ended; nobody else finds the task.
func TestCancelStopsTheCallAndOnlyTheOwnerSeesTheTask(t *testing.T) {
	m := newManager(t, Settings{After: 10 * time.Millisecond})
	ctx := context.Background()
	var saw atomic.Bool
	rec, _, err := m.Start(ctx, Spec{Owner: "alice"}, slow(make(chan struct{}), &saw))
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	if _, err := m.Get(ctx, "bob", rec.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another owner's get: %v", err)
	}
	if _, _, err := m.Cancel(ctx, "bob", rec.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another owner's cancel: %v", err)
	}
	got, terminal, err := m.Cancel(ctx, "alice", rec.ID)
	if err != nil || terminal || got.Status != Cancelled {
		t.Fatalf("cancel: %+v %v %v", got, terminal, err)
	}
	waitFor(t, "the call sees its cancellation", saw.Load)
	time.Sleep(20 * time.Millisecond) // the call's answer must not undo it
	if r, _ := m.Get(ctx, "alice", rec.ID); r.Status != Cancelled {
		t.Errorf("after the call returned: %s", r.Status)
	}
	if _, terminal, _ := m.Cancel(ctx, "alice", rec.ID); !terminal {
		t.Error("a second cancel did not report the task ended")
	}
}

// A result over MaxResult fails the task, saying so; the caller's bound
// on running tasks refuses one more.
func TestBoundsOnResultsAndRunningTasks(t *testing.T) {
	m := newManager(t, Settings{After: 10 * time.Millisecond, MaxResult: 16, MaxRunning: 1})
	ctx := context.Background()
	release := make(chan struct{})
	rec, _, err := m.Start(ctx, Spec{Owner: "o"}, slow(release, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Start(ctx, Spec{Owner: "o"}, quick("x")); !errors.Is(err, ErrBusy) {
		t.Errorf("a second task of the same caller: %v", err)
	}
	if _, ans, err := m.Start(ctx, Spec{Owner: "other"}, quick("x")); err != nil || ans == nil {
		t.Errorf("another caller: %v", err)
	}
	close(release)
	done, _ := m.Wait(ctx, "o", rec.ID)
	if done.Status != Failed || !strings.Contains(done.Message, "EVOKORE_TASK_MAX_RESULT_BYTES") || !strings.Contains(string(done.Detailed()), `"error":{"code":-32603`) {
		t.Errorf("an oversized result: %s %q %s", done.Status, done.Message, done.Detailed())
	}
}

// A task lives for its ttl: past it, it is gone for its owner too.
func TestTasksExpireWithTheirTTL(t *testing.T) {
	now := time.Now()
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	at := func() time.Time { return time.Unix(0, clock.Load()) }
	m := newManager(t, Settings{After: 10 * time.Millisecond})
	m.Now = at
	mem := NewMemory()
	mem.Now = at
	m.Use(mem)
	ctx := context.Background()
	rec, _, err := m.Start(ctx, Spec{Owner: "o", TTL: time.Minute, Wrap: true}, quick("x"))
	if err != nil || rec.TTLMs != 60000 {
		t.Fatal(rec, err)
	}
	clock.Add(int64(59 * time.Second))
	if _, err := m.Get(ctx, "o", rec.ID); err != nil {
		t.Errorf("within its ttl: %v", err)
	}
	clock.Add(int64(2 * time.Second))
	if _, err := m.Get(ctx, "o", rec.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("past its ttl: %v", err)
	}
}

// A held call shows as input_required to a 2025-11-25 client and as
// working, with why, to a 2026-07-28 one.
func TestHeldTasksPerEra(t *testing.T) {
	m := newManager(t, Settings{After: 10 * time.Millisecond})
	ctx := context.Background()
	release := make(chan struct{})
	step := func(ctx context.Context, h Handle, _ *Input) Answer {
		time.Sleep(30 * time.Millisecond)
		resume := h.Hold("Waiting for approval 1234 by the user or an operator.")
		<-release
		resume()
		return Answer{Result: json.RawMessage(`{"content":[]}`)}
	}
	rec, _, err := m.Start(ctx, Spec{Owner: "o"}, step)
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	waitFor(t, "held", func() bool { r, _ := m.Get(ctx, "o", rec.ID); return r.Held })
	r, _ := m.Get(ctx, "o", rec.ID)
	if s := string(r.LegacyTask()); !strings.Contains(s, `"status":"input_required"`) || !strings.Contains(s, "approval 1234") {
		t.Errorf("2025-11-25: %s", s)
	}
	if s := string(r.Detailed()); !strings.Contains(s, `"status":"working"`) || !strings.Contains(s, "approval 1234") {
		t.Errorf("2026-07-28: %s", s)
	}
	close(release)
	if done, _ := m.Wait(ctx, "o", rec.ID); done.Status != Completed || done.Held {
		t.Errorf("resumed: %+v", done)
	}
}

// Two replicas on one store: a task made on one is cancelled on the
// other, and its call stops; a task whose replica stopped is failed,
// saying so, by the first reader.
func TestReplicasShareTasksAndFailAbandonedOnes(t *testing.T) {
	shared := NewMemory()
	replica := func() *Manager {
		m := newManager(t, Settings{After: 10 * time.Millisecond})
		m.beatEvery, m.staleAfter = 20*time.Millisecond, 200*time.Millisecond
		m.Use(shared)
		return m
	}
	a, b := replica(), replica()
	ctx := context.Background()
	var saw atomic.Bool
	rec, _, err := a.Start(ctx, Spec{Owner: "o"}, slow(make(chan struct{}), &saw))
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	if _, _, err := b.Cancel(ctx, "o", rec.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the running replica stops the call", saw.Load)

	c := replica()
	rec, _, err = c.Start(ctx, Spec{Owner: "o"}, slow(make(chan struct{}), nil))
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	c.mu.Lock()
	close(c.stop) // c stops beating, as a replica that died
	c.closed = true
	c.mu.Unlock()
	waitFor(t, "the abandoned task fails", func() bool {
		r, err := b.Get(ctx, "o", rec.ID)
		return err == nil && r.Status == Failed && strings.Contains(r.Message, "stopped before it ended")
	})
}

// Shutting down fails the tasks still running, saying why.
func TestCloseFailsRunningTasks(t *testing.T) {
	m := New(Settings{After: 10 * time.Millisecond}, nil)
	ctx := context.Background()
	rec, _, err := m.Start(ctx, Spec{Owner: "o"}, slow(make(chan struct{}), nil))
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	m.Close()
	r, err := m.store().Load(ctx, rec.ID)
	if err != nil || r.Status != Failed || !strings.Contains(r.Message, "shut down") {
		t.Errorf("after Close: %+v %v", r, err)
	}
	if _, _, err := m.Start(ctx, Spec{Owner: "o"}, quick("x")); err == nil {
		t.Error("a task started after Close")
	}
}
