package codemode

import "time"

// Limits bound one run.
type Limits struct {
	// Wall is how long a run may take, tool calls and approvals
	// included; the router kills the sandbox then.
	Wall time.Duration `json:"wall"`
	// CPU is the CPU time the program may use (time waiting for tools is
	// not CPU time).
	CPU time.Duration `json:"cpu"`
	// Memory is how many bytes the sandbox may map beyond what it had
	// when it started, the engine's heap included.
	Memory int64 `json:"memory"`
	// Calls is the most tool calls one run may make.
	Calls int `json:"calls"`
	// Output is the most bytes of the returned value, and separately of
	// the log, that the answer carries.
	Output int `json:"output"`
	// Total is the memory the sandboxes of every run at once may map
	// together (Memory each): a bound of the router's, not of one run,
	// so the sandbox is never told it.
	Total int64 `json:"-"`
}
