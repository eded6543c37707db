package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"
)

// Status is where a task is in its life.
type Status string

// The statuses both eras share.
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether s never changes again.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// ErrNotFound is the answer for a task the store does not hold: never
// made, expired, or another owner's.
var ErrNotFound = errors.New("task not found")

// Record is a task as the store keeps it. It never holds the call itself
// (its arguments, its session): only the replica running it holds that.
type Record struct {
	ID    string `json:"id"`
	Owner string `json:"owner"`
	// Tool is the name the call was made under.
	Tool   string `json:"tool"`
	Status Status `json:"status"`
	// Message is the status message, when there is one to show.
	Message string `json:"message,omitempty"`
	// Held marks a task whose call waits for a person's decision (an
	// approval): 2025-11-25 shows it as input_required, 2026-07-28 as
	// working with the message (its client has nothing to answer).
	Held    bool      `json:"held,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// TTLMs is how long the task lives from its creation; PollMs the
	// polling interval suggested.
	TTLMs  int64 `json:"ttlMs"`
	PollMs int64 `json:"pollMs"`
	// Result is the call's result as the client would have got it (a
	// completed task), IsError whether it reports a tool error.
	Result  json.RawMessage `json:"result,omitempty"`
	IsError bool            `json:"isError,omitempty"`
	// Error is the JSON-RPC error object the call answered (a failed
	// task).
	Error json.RawMessage `json:"error,omitempty"`
	// Input are the input requests still outstanding (input_required),
	// keyed as the client sees them; Answers the responses received for
	// the current round so far.
	Input   map[string]json.RawMessage `json:"input,omitempty"`
	Answers map[string]json.RawMessage `json:"answers,omitempty"`
	// Runner is the replica that runs the task; Beat when it last said
	// it still does.
	Runner string    `json:"runner"`
	Beat   time.Time `json:"beat"`
	// Era is the protocol era of the client that made the task
	// (2025-11-25 or 2026-07-28), for the notifications sent about it.
	Era string `json:"era,omitempty"`
}

// Expires is when the task and its result may be dropped.
func (r *Record) Expires() time.Time { return r.Created.Add(time.Duration(r.TTLMs) * time.Millisecond) }

// Clone is a deep copy.
func (r *Record) Clone() *Record {
	c := *r
	c.Result = slices.Clone(r.Result)
	c.Error = slices.Clone(r.Error)
	c.Input = maps.Clone(r.Input)
	c.Answers = maps.Clone(r.Answers)
	return &c
}

// Backend is where records are kept. Implementations are safe for
// concurrent use, and a shared one for use by many processes.
type Backend interface {
	// Create stores a new record; it expires at r.Expires().
	Create(ctx context.Context, r *Record) error
	// Load returns the record with id, or ErrNotFound (an expired one
	// too).
	Load(ctx context.Context, id string) (*Record, error)
	// Update changes the record with id by fn, atomically: fn sees the
	// record as stored and changes it in place, or returns false to
	// leave it. fn may run more than once when a writer elsewhere raced
	// it. Update returns the record as stored after, or ErrNotFound.
	Update(ctx context.Context, id string, fn func(*Record) bool) (*Record, error)
	// List returns owner's live records, newest first.
	List(ctx context.Context, owner string) ([]*Record, error)
}

// Memory is a Backend for one process.
type Memory struct {
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	mu      sync.Mutex
	records map[string]*Record
}

// NewMemory is an empty in-process backend.
func NewMemory() *Memory { return &Memory{records: map[string]*Record{}} }

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// liveLocked is the record with id when it has not expired.
func (m *Memory) liveLocked(id string) (*Record, bool) {
	r, ok := m.records[id]
	if ok && !m.now().Before(r.Expires()) {
		delete(m.records, id)
		return nil, false
	}
	return r, ok
}

// Create implements Backend.
func (m *Memory) Create(_ context.Context, r *Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.records == nil {
		m.records = map[string]*Record{}
	}
	if _, dup := m.liveLocked(r.ID); dup {
		return errors.New("task id already in use")
	}
	m.sweepLocked()
	m.records[r.ID] = r.Clone()
	return nil
}

// sweepLocked drops expired records, so a process that makes many tasks
// does not keep them all.
func (m *Memory) sweepLocked() {
	now := m.now()
	for id, r := range m.records {
		if !now.Before(r.Expires()) {
			delete(m.records, id)
		}
	}
}

// Load implements Backend.
func (m *Memory) Load(_ context.Context, id string) (*Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.liveLocked(id)
	if !ok {
		return nil, ErrNotFound
	}
	return r.Clone(), nil
}

// Update implements Backend.
func (m *Memory) Update(_ context.Context, id string, fn func(*Record) bool) (*Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.liveLocked(id)
	if !ok {
		return nil, ErrNotFound
	}
	c := r.Clone()
	if fn(c) {
		m.records[id] = c
		return c.Clone(), nil
	}
	return r.Clone(), nil
}

// List implements Backend.
func (m *Memory) List(_ context.Context, owner string) ([]*Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked()
	var out []*Record
	for _, r := range m.records {
		if r.Owner == owner {
			out = append(out, r.Clone())
		}
	}
	SortNewestFirst(out)
	return out, nil
}

// SortNewestFirst orders records by creation, newest first, ties by id.
func SortNewestFirst(rs []*Record) {
	slices.SortFunc(rs, func(a, b *Record) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
}
