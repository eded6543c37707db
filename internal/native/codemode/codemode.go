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
// saying which; the router and its other sessions never notice.
package codemode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/router"
)

// Options configure run_code.
type Options struct {
	// Env holds the EVOKORE_CODE_* bounds.
	Env config.Env
	// Command starts a sandbox process; nil is SelfCommand.
	Command func() (*exec.Cmd, error)
}

// Register binds run_code.
func Register(t *native.Table, host *native.Host, o Options) {
	m := &manager{host: host, command: o.Command, limits: ReadLimits(o.Env)}
	if m.command == nil {
		m.command = SelfCommand
	}
	t.Bind(native.RunCode, m.runCode)
}

type manager struct {
	host    *native.Host
	command func() (*exec.Cmd, error)
	limits  Limits
}

// ReadLimits reads the EVOKORE_CODE_* bounds; an absent or unusable
// value keeps its default.
func ReadLimits(env config.Env) Limits {
	l := Limits{
		Wall:   config.DefaultCodeTimeout,
		CPU:    config.DefaultCodeCPU,
		Memory: config.DefaultCodeMemoryMB << 20,
		Calls:  config.DefaultCodeMaxCalls,
		Output: config.DefaultCodeMaxOutputBytes,
	}
	positive := func(name string) (int, bool) {
		n, err := strconv.Atoi(strings.TrimSpace(env.Get(name)))
		return n, err == nil && n > 0
	}
	if n, ok := positive("EVOKORE_CODE_TIMEOUT_MS"); ok {
		l.Wall = time.Duration(n) * time.Millisecond
	}
	if n, ok := positive("EVOKORE_CODE_CPU_MS"); ok {
		l.CPU = time.Duration(n) * time.Millisecond
	}
	if n, ok := positive("EVOKORE_CODE_MEMORY_MB"); ok {
		l.Memory = int64(n) << 20
	}
	if n, ok := positive("EVOKORE_CODE_MAX_CALLS"); ok {
		l.Calls = n
	}
	if n, ok := positive("EVOKORE_CODE_MAX_OUTPUT_BYTES"); ok {
		l.Output = n
	}
	return l
}

// answer is run_code's result text.
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
	id := newRunID()
	ctx = router.StartRun(ctx, id)
	out := Run(ctx, m.command, args.Code, m.limits, func(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
		return m.host.Call(ctx, call.Session, name, args)
	})
	b, err := json.Marshal(result{Run: id, Outcome: out})
	if err != nil {
		return native.Errorf("cannot encode the run's result: %v", err), nil
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	if out.Error != "" {
		res.IsError = true
	}
	return res, nil
}

func newRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "run-" + hex.EncodeToString(b)
}
