package sharedstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/evokore/evokore/internal/tasks"
)

// Tasks is tasks.Backend on Redis, so that a task made through one
// replica is read, answered and cancelled through any other:
//
//   - task:<id>: one task's record as JSON, expiring with the task;
//   - tasks:<owner hash>: a sorted set of an owner's task ids by creation
//     (tasks/list), expiring with its last task.
//
// A change is a read, the caller's change and a write under WATCH: the
// write fails, and the change runs again on what another replica wrote,
// when the record changed in between.
type Tasks struct {
	client *redis.Client
	prefix string
}

var _ tasks.Backend = (*Tasks)(nil)

// NewTasks returns the shared tasks under prefix.
func NewTasks(client *redis.Client, prefix string) *Tasks {
	return &Tasks{client: client, prefix: prefix}
}

func (t *Tasks) key(id string) string { return t.prefix + "task:" + id }

// index names an owner's sorted set; the owner (a tenant and subject, or
// a session id) is hashed, so no identity appears in key names.
func (t *Tasks) index(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return t.prefix + "tasks:" + hex.EncodeToString(sum[:16])
}

// maxRecord bounds a stored record: a result within
// EVOKORE_TASK_MAX_RESULT_BYTES, and what else a task holds.
const maxRecord = 64 << 20

// maxListed bounds the tasks a list reads.
const maxListed = 1000

// Create implements tasks.Backend.
func (t *Tasks) Create(ctx context.Context, r *tasks.Record) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	exp := r.Expires()
	ok, err := t.client.SetArgs(ctx, t.key(r.ID), raw, redis.SetArgs{Mode: "NX", ExpireAt: exp}).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	if ok != "OK" {
		return errors.New("task id already in use")
	}
	// The index lives as long as its longest-lived task: a new one takes
	// this task's expiry (NX), an older one only a later one (GT).
	idx, ttl := t.index(r.Owner), time.Until(exp)
	pipe := t.client.TxPipeline()
	pipe.ZAdd(ctx, idx, redis.Z{Score: float64(r.Created.UnixMilli()), Member: r.ID})
	pipe.ExpireNX(ctx, idx, ttl)
	pipe.ExpireGT(ctx, idx, ttl)
	_, err = pipe.Exec(ctx)
	return err
}

func decode(raw []byte) (*tasks.Record, error) {
	if len(raw) > maxRecord {
		return nil, fmt.Errorf("a stored task is %d bytes, over %d", len(raw), maxRecord)
	}
	var r tasks.Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("a stored task does not decode: %w", err)
	}
	return &r, nil
}

// Load implements tasks.Backend.
func (t *Tasks) Load(ctx context.Context, id string) (*tasks.Record, error) {
	raw, err := t.client.Get(ctx, t.key(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, tasks.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return decode(raw)
}

// Update implements tasks.Backend.
func (t *Tasks) Update(ctx context.Context, id string, fn func(*tasks.Record) bool) (*tasks.Record, error) {
	key := t.key(id)
	var out *tasks.Record
	change := func(tx *redis.Tx) error {
		raw, err := tx.Get(ctx, key).Bytes()
		if errors.Is(err, redis.Nil) {
			return tasks.ErrNotFound
		}
		if err != nil {
			return err
		}
		r, err := decode(raw)
		if err != nil {
			return err
		}
		out = r
		if !fn(r) {
			return nil
		}
		next, err := json.Marshal(r)
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.SetArgs(ctx, key, next, redis.SetArgs{Mode: "XX", KeepTTL: true})
			return nil
		})
		return err
	}
	for range 20 {
		err := t.client.Watch(ctx, change, key)
		if errors.Is(err, redis.TxFailedErr) {
			continue // another replica wrote it: change what it wrote
		}
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, fmt.Errorf("task %s: too many concurrent changes", id)
}

// List implements tasks.Backend.
func (t *Tasks) List(ctx context.Context, owner string) ([]*tasks.Record, error) {
	idx := t.index(owner)
	ids, err := t.client.ZRangeArgs(ctx, redis.ZRangeArgs{Key: idx, Start: 0, Stop: maxListed - 1, Rev: true}).Result()
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = t.key(id)
	}
	vals, err := t.client.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, err
	}
	var out []*tasks.Record
	var gone []any
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			gone = append(gone, ids[i])
			continue
		}
		r, err := decode([]byte(s))
		if err != nil || r.Owner != owner {
			continue
		}
		out = append(out, r)
	}
	if len(gone) > 0 {
		_ = t.client.ZRem(ctx, idx, gone...).Err()
	}
	tasks.SortNewestFirst(out)
	return out, nil
}

// TasksUnavailable is the tasks' backend of a replica that was told to
// share its state but could not reach the store: every task is refused
// with Err, none is kept where the other replicas cannot see it.
type TasksUnavailable struct{ Err error }

var _ tasks.Backend = TasksUnavailable{}

func (u TasksUnavailable) err() error { return Unavailable(u).err() }

// Create implements tasks.Backend.
func (u TasksUnavailable) Create(context.Context, *tasks.Record) error { return u.err() }

// Load implements tasks.Backend.
func (u TasksUnavailable) Load(context.Context, string) (*tasks.Record, error) { return nil, u.err() }

// Update implements tasks.Backend.
func (u TasksUnavailable) Update(context.Context, string, func(*tasks.Record) bool) (*tasks.Record, error) {
	return nil, u.err()
}

// List implements tasks.Backend.
func (u TasksUnavailable) List(context.Context, string) ([]*tasks.Record, error) { return nil, u.err() }
