// Package codemode is run_code: the model sends the body of an async
// JavaScript function, and one call composes many tool calls.
//
// Every tool call a program makes goes through the router's pipeline as
// the calling session (Host.Call): role, tenant, profile, pins, approval,
// rate limit, cooldown, audit, replay and tracing treat it as the model's
// own call, and records name the run it belongs to (router.StartRun). A
// call held for approval holds the program until it is decided (the
// approval stage waits for calls of a run).
//
// The program runs in a separate process, this same binary started with
// SandboxArg: goja, a pure-Go engine, with no file system, network,
// process or timer access; its tool calls travel back over a pipe
// (frame.go). Being a process, it can be bounded where the router cannot
// be hurt: RLIMIT_AS caps its memory, RLIMIT_CPU and an engine interrupt
// its CPU time, the router kills it at its wall time or at its call cap,
// and trims what it returns. A run that breaks a bound ends with an error
// saying which; the router and its other sessions never notice. The
// sandboxes of every session together map at most Limits.Total: a run
// past it waits for its share up to a quarter of its wall time (a burst
// of short programs finishes, one after another, instead of failing; the
// wait counts against the wall time), and is refused, naming the
// setting, if none frees by then.
package codemode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/semaphore"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// Options configure run_code.
type Options struct {
	// Limits are the EVOKORE_CODE_* bounds (ReadLimits).
	Limits Limits
	// NativeTimeout is the router's bound on a native call
	// (EVOKORE_PROXY_REQUEST_TIMEOUT_MS); zero is none.
	NativeTimeout time.Duration
	// Command starts a sandbox process; nil is SelfCommand.
	Command func() (procgroup.Spec, error)
}

// Register binds run_code.
func Register(t *native.Table, host *native.Host, o Options) {
	l := o.Limits
	l.Wall = wallWithin(l.Wall, o.NativeTimeout)
	m := &manager{host: host, command: o.Command, limits: l, running: map[string]int{},
		memory: semaphore.NewWeighted(max(l.Total, 1))}
	if m.command == nil {
		m.command = SelfCommand
	}
	t.Bind(native.RunCode, m.runCode)
}

// wallWithin is the wall time of a run under the router's bound on a
// native call: a run must end before it, so the model reads the run's
// own answer (which bound, the log so far) and not the router's "did not
// finish". It ends a second before, or halfway under a bound of less
// than two seconds, time to kill the sandbox and answer.
func wallWithin(wall, native time.Duration) time.Duration {
	if native <= 0 {
		return wall
	}
	return min(wall, native-min(time.Second, native/2))
}

type manager struct {
	host    *native.Host
	command func() (procgroup.Spec, error)
	limits  Limits

	mu      sync.Mutex
	running map[string]int // programs running, by caller (session.CallerOf)

	// memory is Limits.Total, each run's sandbox taking Limits.Memory of
	// it, first come first served.
	memory *semaphore.Weighted
}

// runsAtOnce is how many programs one caller runs at once. Each is a
// sandbox with the run's bounds (memory, CPU time); without a cap a
// model firing run_code calls together would multiply them by as many
// as it sent.
const runsAtOnce = 2

// begin counts a run of caller in, unless it has runsAtOnce running;
// end counts it out.
func (m *manager) begin(caller string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running[caller] >= runsAtOnce {
		return false
	}
	m.running[caller]++
	return true
}

func (m *manager) end(caller string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running[caller]--; m.running[caller] <= 0 {
		delete(m.running, caller)
	}
}

// maxMemoryMB is the largest EVOKORE_CODE_MEMORY_MB, 1 TiB: far past any
// real bound, and far from overflowing when counted in bytes.
const maxMemoryMB = 1 << 20

// ReadLimits reads the EVOKORE_CODE_* bounds; v collects what it cannot
// use, which keeps its default.
func ReadLimits(v *config.Vars) Limits {
	mb := v.Positive("EVOKORE_CODE_MEMORY_MB")
	if mb > maxMemoryMB {
		v.Warn(fmt.Sprintf("Ignoring EVOKORE_CODE_MEMORY_MB=%d: want at most %d (1 TiB).", mb, maxMemoryMB))
		mb = config.DefaultCodeMemoryMB
	}
	total := v.Positive("EVOKORE_CODE_TOTAL_MEMORY_MB")
	if total > maxMemoryMB {
		v.Warn(fmt.Sprintf("Ignoring EVOKORE_CODE_TOTAL_MEMORY_MB=%d: want at most %d (1 TiB).", total, maxMemoryMB))
		total = config.DefaultCodeTotalMemoryMB
	}
	if total < mb {
		v.Warn(fmt.Sprintf("EVOKORE_CODE_TOTAL_MEMORY_MB=%d is less than one program's EVOKORE_CODE_MEMORY_MB=%d: run_code runs no program.", total, mb))
	}
	return Limits{
		Total:  int64(total) << 20,
		Wall:   v.Millis("EVOKORE_CODE_TIMEOUT_MS", 0),
		CPU:    v.Millis("EVOKORE_CODE_CPU_MS", 0),
		Memory: int64(mb) << 20,
		Calls:  v.Positive("EVOKORE_CODE_MAX_CALLS"),
		Output: v.Positive("EVOKORE_CODE_MAX_OUTPUT_BYTES"),
	}
}

// result is run_code's answer, as JSON text.
type result struct {
	Run string `json:"run"`
	Outcome
}

func (m *manager) runCode(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var args struct {
		Code string `json:"code"`
	}
	if err := call.Decode(&args); err != nil {
		return call.Invalid(err), nil
	}
	if strings.TrimSpace(args.Code) == "" {
		return native.MissingArgument("code"), nil
	}
	if router.RunOf(ctx) != "" {
		// A program starting programs would multiply its bounds.
		return native.Errorf("run_code cannot be called from a run_code program"), nil
	}
	if !Supported {
		return native.Errorf("run_code needs Linux, where a program's memory can be bounded"), nil
	}
	caller := session.CallerOf(call.Session)
	if !m.begin(caller) {
		return native.Errorf("this caller runs at most %d programs at once, and %d are running: await them, or do the work in one program (its calls may run together)", runsAtOnce, runsAtOnce), nil
	}
	defer m.end(caller)
	// The wait for a sandbox counts against the run's wall time, so the
	// run still ends inside the router's bound on a native call.
	ctx, cancel := context.WithTimeout(ctx, m.limits.Wall)
	defer cancel()
	if refusal := m.sandbox(ctx); refusal != nil {
		return refusal, nil
	}
	defer m.memory.Release(m.limits.Memory)
	id := newRunID()
	ctx = router.StartRun(ctx, id)
	out := Run(ctx, m.command, args.Code, m.limits, func(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
		return m.host.Call(ctx, call.Session, name, args)
	})
	b, err := marshal(result{Run: id, Outcome: out})
	if err != nil {
		return native.Errorf("cannot encode the run's result: %v", err), nil
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	if out.Error != "" {
		res.IsError = true
	}
	return res, nil
}

// sandbox waits for the run's share of the sandboxes' memory, up to a
// quarter of the run's wall time (a wait to the end of it would leave
// the run that finally starts no time to run); a refusal is the answer
// when none freed by then, or when one program's memory is more than all
// of them may have.
func (m *manager) sandbox(ctx context.Context) *mcp.CallToolResult {
	mb, total := m.limits.Memory>>20, m.limits.Total>>20
	if m.limits.Memory > m.limits.Total {
		return native.Errorf("run_code runs no program here: EVOKORE_CODE_TOTAL_MEMORY_MB (%d) is less than one program's EVOKORE_CODE_MEMORY_MB (%d)", total, mb)
	}
	wait := m.limits.Wall / 4
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := m.memory.Acquire(wctx, m.limits.Memory); err != nil {
		if ctx.Err() != nil {
			return native.Errorf("the run was cancelled before it started")
		}
		return native.Errorf("the program did not start: every sandbox is busy (EVOKORE_CODE_TOTAL_MEMORY_MB=%d holds %d of "+
			"EVOKORE_CODE_MEMORY_MB=%d) and none ended within %s; try again when one has", total, total/mb, mb, wait)
	}
	return nil
}

func newRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "run-" + hex.EncodeToString(b)
}
