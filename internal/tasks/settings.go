package tasks

import (
	"time"

	"github.com/evokore/evokore/internal/config"
)

// Settings bound the tasks a router keeps (EVOKORE_TASK_*).
type Settings struct {
	// TTL is the longest a task and its result are kept, from its
	// creation (EVOKORE_TASK_TTL_MS); a client that asks for less gets
	// less.
	TTL time.Duration
	// Poll is the polling interval a task suggests (EVOKORE_TASK_POLL_MS).
	Poll time.Duration
	// After is how long a call of a client that declared the tasks
	// extension (2026-07-28) may take before it answers as a task
	// (EVOKORE_TASK_AFTER_MS).
	After time.Duration
	// MaxResult bounds a task's result, in bytes
	// (EVOKORE_TASK_MAX_RESULT_BYTES).
	MaxResult int
	// MaxRunning bounds the tasks one caller runs at once on a replica
	// (EVOKORE_TASK_MAX_RUNNING).
	MaxRunning int
}

// ReadSettings reads the tasks' variables; v collects what it cannot use.
func ReadSettings(v *config.Vars) Settings {
	return Settings{
		TTL:        v.Millis("EVOKORE_TASK_TTL_MS", 0),
		Poll:       v.Millis("EVOKORE_TASK_POLL_MS", 0),
		After:      v.Millis("EVOKORE_TASK_AFTER_MS", 0),
		MaxResult:  v.Positive("EVOKORE_TASK_MAX_RESULT_BYTES"),
		MaxRunning: v.Positive("EVOKORE_TASK_MAX_RUNNING"),
	}
}

// withDefaults fills what a caller left zero (tests build Settings by
// hand).
func (s Settings) withDefaults() Settings {
	if s.TTL <= 0 {
		s.TTL = time.Hour
	}
	if s.Poll <= 0 {
		s.Poll = time.Second
	}
	if s.After <= 0 {
		s.After = 500 * time.Millisecond
	}
	if s.MaxResult <= 0 {
		s.MaxResult = 1 << 20
	}
	if s.MaxRunning <= 0 {
		s.MaxRunning = 32
	}
	return s
}
