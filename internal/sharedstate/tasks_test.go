package sharedstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/evokore/evokore/internal/sharedstate"
	"github.com/evokore/evokore/internal/tasks"
	"github.com/evokore/evokore/internal/testutil"
)

func redisClient(t *testing.T) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(testutil.RedisServer(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Two replicas on one Redis: a task made through one is read, answered
// and cancelled through the other, and the replica running it stops the
// call; each owner lists only its own tasks; a record is gone with its
// ttl.
func TestTasksAreSharedThroughRedis(t *testing.T) {
	client := redisClient(t)
	replica := func() *tasks.Manager {
		m := tasks.New(tasks.Settings{After: 10 * time.Millisecond, Poll: 50 * time.Millisecond}, nil)
		m.Use(sharedstate.NewTasks(client, "t:"))
		t.Cleanup(m.Close)
		return m
	}
	a, b := replica(), replica()
	ctx := context.Background()

	var stopped atomic.Bool
	var answered atomic.Pointer[tasks.Input]
	step := func(ctx context.Context, _ tasks.Handle, in *tasks.Input) tasks.Answer {
		if in == nil {
			time.Sleep(50 * time.Millisecond)
			return tasks.Answer{Input: map[string]json.RawMessage{"ok": json.RawMessage(`{"method":"elicitation/create"}`)}, State: "s"}
		}
		answered.Store(in)
		<-ctx.Done()
		stopped.Store(true)
		return tasks.Answer{Result: json.RawMessage(`{}`)}
	}
	rec, _, err := a.Start(ctx, tasks.Spec{Owner: "alice", Tool: "t"}, step)
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	var got *tasks.Record
	deadline := time.Now().Add(10 * time.Second)
	for got == nil || got.Status != tasks.InputRequired {
		if time.Now().After(deadline) {
			t.Fatalf("never input_required through the other replica: %+v", got)
		}
		if got, err = b.Get(ctx, "alice", rec.ID); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := b.Get(ctx, "bob", rec.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("another owner reads it: %v", err)
	}
	if _, err := b.Answer(ctx, "alice", rec.ID, map[string]json.RawMessage{"r1.ok": json.RawMessage(`{"action":"accept"}`)}); err != nil {
		t.Fatal(err)
	}
	for answered.Load() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the answer given through the other replica never reached the call")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if in := answered.Load(); in.State != "s" || in.Responses["ok"] == nil {
		t.Errorf("the call resumed with %+v", in)
	}
	if _, _, err := b.Cancel(ctx, "alice", rec.ID); err != nil {
		t.Fatal(err)
	}
	for !stopped.Load() {
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatal("the running replica never stopped the call cancelled through the other")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r, _ := a.Get(ctx, "alice", rec.ID); r.Status != tasks.Cancelled {
		t.Errorf("after the cancel: %s", r.Status)
	}
	if list, err := b.List(ctx, "alice"); err != nil || len(list) != 1 || list[0].ID != rec.ID {
		t.Errorf("alice's list: %v %v", list, err)
	}
	if list, _ := b.List(ctx, "bob"); len(list) != 0 {
		t.Errorf("bob's list: %v", list)
	}

	short, _, err := a.Start(ctx, tasks.Spec{Owner: "alice", TTL: 300 * time.Millisecond, Wrap: true},
		func(context.Context, tasks.Handle, *tasks.Input) tasks.Answer {
			return tasks.Answer{Result: json.RawMessage(`{}`)}
		})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "alice", short.ID); err != nil {
		t.Fatalf("within its ttl: %v", err)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := b.Get(ctx, "alice", short.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("past its ttl: %v", err)
	}
}

// Concurrent changes through two replicas all land: none is lost to the
// other's write.
func TestConcurrentTaskChangesAllLand(t *testing.T) {
	client := redisClient(t)
	be := sharedstate.NewTasks(client, "c:")
	ctx := context.Background()
	now := time.Now()
	rec := &tasks.Record{ID: "x", Owner: "o", Status: tasks.InputRequired, Created: now, Updated: now, TTLMs: 60000,
		Input: map[string]json.RawMessage{}}
	for i := range 20 {
		rec.Input[string(rune('a'+i))] = json.RawMessage(`{}`)
	}
	if err := be.Create(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := be.Create(ctx, rec); err == nil {
		t.Error("a second record under the same id was stored")
	}
	done := make(chan error, 20)
	for i := range 20 {
		go func() {
			_, err := be.Update(ctx, "x", func(r *tasks.Record) bool {
				k := string(rune('a' + i))
				if r.Answers == nil {
					r.Answers = map[string]json.RawMessage{}
				}
				r.Answers[k] = json.RawMessage(`1`)
				delete(r.Input, k)
				return true
			})
			done <- err
		}()
	}
	for range 20 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	got, err := be.Load(ctx, "x")
	if err != nil || len(got.Answers) != 20 || len(got.Input) != 0 {
		t.Fatalf("after 20 concurrent answers: %d answers, %d left, %v", len(got.Answers), len(got.Input), err)
	}
	ttl, _ := client.PTTL(ctx, "c:task:x").Result()
	if ttl <= 0 || ttl > time.Minute {
		t.Errorf("the record's expiry after changes: %v", ttl)
	}
	if _, err := be.Load(ctx, "nope"); !errors.Is(err, tasks.ErrNotFound) || !strings.Contains(err.Error(), "not found") {
		t.Errorf("an unknown id: %v", err)
	}
}
