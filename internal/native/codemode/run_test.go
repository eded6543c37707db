package codemode_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native/codemode"
	"github.com/evokore/evokore/internal/testutil"
)

func TestMain(m *testing.M) {
	if codemode.IsSandbox(os.Args) {
		os.Exit(codemode.Sandbox(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

var limits = codemode.Limits{Wall: 20 * time.Second, CPU: 2 * time.Second, Memory: 256 << 20, Calls: 50, Output: 4096}

// echo answers every call with its name and arguments as structured
// content, and counts them.
func echo(n *atomic.Int64) codemode.Caller {
	return func(_ context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
		n.Add(1)
		if name == "fails" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}}, nil
		}
		return &mcp.CallToolResult{StructuredContent: map[string]any{"tool": name, "args": json.RawMessage(args)}}, nil
	}
}

func run(t *testing.T, code string, l codemode.Limits) (codemode.Outcome, int64) {
	t.Helper()
	if !codemode.Supported {
		t.Skip("run_code bounds memory on Linux only")
	}
	var n atomic.Int64
	out := codemode.Run(context.Background(), codemode.SelfCommand, code, l, echo(&n))
	return out, n.Load()
}

func TestProgramCallsToolsAndReturns(t *testing.T) {
	out, n := run(t, `
		const a = await tools.first({x: 1});
		const b = await tools.call("second", {y: a.args.x + 1});
		console.log("got", b.args.y);
		let caught = "";
		try { await tools.fails({}); } catch (e) { caught = e.message; }
		return {a: a.tool, b: b.args, caught};`, limits)
	if out.Error != "" {
		t.Fatalf("run failed: %s", out.Error)
	}
	if got := string(out.Value); got != `{"a":"first","b":{"y":2},"caught":"fails: it broke"}` {
		t.Errorf("value = %s", got)
	}
	if len(out.Log) != 1 || out.Log[0] != "got 2" {
		t.Errorf("log = %q", out.Log)
	}
	if n != 3 || out.Calls != 3 {
		t.Errorf("calls = %d, reported %d; want 3", n, out.Calls)
	}
}

func TestBoundsEndRuns(t *testing.T) {
	for _, tc := range []struct{ name, code, want string }{
		{"loop", `while (true) {}`, "CPU time"},
		{"allocation", `let s = "x"; while (true) { s = s + s; }`, "out of memory"},
		{"calls", `for (let i = 0; i < 10000; i++) { await tools.echo({i}); } return "done";`, "more than 50 tool calls"},
		{"never settles", `await new Promise(() => {});`, "never settle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := run(t, tc.code, limits)
			if !strings.Contains(out.Error, tc.want) {
				t.Fatalf("error = %q, want it to say %q", out.Error, tc.want)
			}
		})
	}
}

// A run's tool calls end with it: once the program has returned, or a
// bound has stopped it, a call still running (one held for approval) is
// cancelled and a call still waiting for a slot never starts, so the
// answer does not wait for the wall time.
func TestCallsEndWithTheRun(t *testing.T) {
	if !codemode.Supported {
		t.Skip("run_code bounds memory on Linux only")
	}
	l := limits
	l.Wall = 10 * time.Second
	capped := l
	capped.Calls = 5
	for _, tc := range []struct {
		name, code string
		l          codemode.Limits
	}{
		{"returned", `for (let i = 0; i < 20; i++) { tools.held({i}); } return "left";`, l},
		{"call cap", `for (let i = 0; i < 20; i++) { tools.held({i}); } await tools.held({});`, capped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var started atomic.Int64
			held := func(ctx context.Context, _ string, _ json.RawMessage) (*mcp.CallToolResult, error) {
				started.Add(1)
				<-ctx.Done()
				return nil, ctx.Err()
			}
			begun := time.Now()
			codemode.Run(context.Background(), codemode.SelfCommand, tc.code, tc.l, held)
			if took := time.Since(begun); took > tc.l.Wall/2 {
				t.Errorf("the run answered after %s; its calls held it toward its wall time of %s", took, tc.l.Wall)
			}
			if n := started.Load(); n > 4 {
				t.Errorf("%d calls started; only the 4 that had slots when the run ended should have", n)
			}
		})
	}
}

// The tools object is no tool itself: printing it, turning it into a
// string or JSON calls nothing; any other name is a tool.
func TestToolsObjectIsNoTool(t *testing.T) {
	out, n := run(t, `
		console.log(tools);
		return [String(tools), JSON.stringify({t: tools}), typeof tools.hasOwnProperty, typeof tools.any_tool];`, limits)
	if out.Error != "" {
		t.Fatalf("run failed: %s", out.Error)
	}
	if got := string(out.Value); got != `["[object Object]","{\"t\":{}}","function","function"]` {
		t.Errorf("value = %s", got)
	}
	if len(out.Log) != 1 || out.Log[0] != "{}" {
		t.Errorf("log = %q", out.Log)
	}
	if n != 0 || out.Calls != 0 {
		t.Errorf("%d tool calls made, reported %d; want none", n, out.Calls)
	}
}

// A frame over the bound ends the run with an error saying so.
func TestOverlongFrameEndsTheRun(t *testing.T) {
	out, _ := run(t, `console.log("x".repeat(17 << 20));`, raceLimits())
	if want := "the program sent a frame over 16777216 bytes"; out.Error != want {
		t.Errorf("error = %q, want %q", out.Error, want)
	}
}

// The answer carries what the program returned within the output bound
// as the model reads it: < stays one byte (no HTML escapes), and a value
// cut to a string fits the bound however many of its bytes need escaping.
func TestValueFitsTheOutputBoundAsCarried(t *testing.T) {
	out, _ := run(t, `return "<&>".repeat(1000);`, limits)
	if out.Error != "" || out.Truncated != 0 || string(out.Value) != `"`+strings.Repeat("<&>", 1000)+`"` {
		t.Errorf("3,002 bytes of value under a 4,096 bound: truncated from %d, %.60s", out.Truncated, out.Value)
	}
	for _, code := range []string{`return "\"".repeat(40000);`, `return "\u0001".repeat(40000);`, `return "é\\".repeat(20000);`} {
		out, _ := run(t, code, limits)
		var s string
		if out.Truncated == 0 || len(out.Value) > limits.Output || json.Unmarshal(out.Value, &s) != nil || len(out.Value) < limits.Output/2 {
			t.Errorf("%s: %d bytes for a bound of %d (truncated from %d)", code, len(out.Value), limits.Output, out.Truncated)
		}
	}
}

// A value nested deeper than the router's JSON carries is the program's
// error, said as such.
func TestAValueTooDeepIsTheProgramsError(t *testing.T) {
	out, _ := run(t, `let v = []; for (let i = 0; i < 11000; i++) v = [v]; return v;`, raceLimits())
	if !strings.Contains(out.Error, "the program's value cannot be sent") {
		t.Errorf("error = %q", out.Error)
	}
}

// raceLimits are the limits with the CPU time a test binary built with
// -race needs (the sandbox is this binary, several times slower there)
// for a program that moves megabytes: the tests using it bound frames
// and values, not CPU, nor the wall time, which a loaded machine
// stretches (a 17 MiB frame once took over 20 s at a load of 10).
func raceLimits() codemode.Limits {
	l := limits
	if testutil.Race {
		l.CPU *= 6
		l.Wall *= 3
	}
	return l
}

// Nothing a program can read names Go: not the functions the sandbox
// gives it (their text, name and the stack traces through them, which
// the engine names by Go reflection: package path and symbol), not the
// engine's GoError global, not an error thrown through a native.
func TestProgramsSeeNoGoNames(t *testing.T) {
	out, _ := run(t, `
		const seen = [String(tools.call), tools.call.name, String(tools.any_tool), tools.any_tool.name,
			String(console.log), console.log.name, typeof GoError, Object.getOwnPropertyNames(globalThis).join()];
		const throws = [
			() => tools.call(),
			() => tools.call({toString() { throw new RangeError("from a getter"); }}),
			() => tools.x({a: 1n}),
			() => { const o = {}; o.o = o; return tools.x(o); },
			() => console.log({toJSON() { throw new Error("in toJSON"); }}),
			() => tools.fails({}),
		];
		for (const f of throws) {
			try { await f(); } catch (e) { seen.push(String(e), String(e.stack), Object.getOwnPropertyNames(e).join()); }
		}
		return seen;`, limits)
	if out.Error != "" {
		t.Fatalf("run failed: %s", out.Error)
	}
	text := string(out.Value)
	for _, goish := range []string{"github.com", "evokore", "codemode", "goja", "GoError", ".func", "(*", "reflect", ".go:"} {
		if strings.Contains(text, goish) {
			t.Errorf("the program read %q:\n%s", goish, text)
		}
	}
	if !strings.Contains(text, `"function call() { [native code] }","call"`) || !strings.Contains(text, "at call (native)") {
		t.Errorf("the natives are not named as JavaScript names them:\n%s", text)
	}
}
