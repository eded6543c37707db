package codemode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// SandboxArg is the hidden first argument that makes the evokore binary
// (or a test binary whose TestMain checks for it) run one program as
// the sandbox instead of anything else. It is no command a user types.
const SandboxArg = "__evokore_run_code_sandbox"

// IsSandbox reports whether args (os.Args) start the sandbox.
func IsSandbox(args []string) bool { return len(args) > 1 && args[1] == SandboxArg }

// Sandbox is the sandbox process: it reads the start frame from in,
// bounds itself (memory, CPU), runs the program and writes its calls,
// logs and end to out. It returns the process's exit code.
//
// The program is JavaScript run by goja, a pure-Go engine: it has no
// file system, network, process, timer or module access; what it can
// reach is the tools object, whose every call goes back to the router.
func Sandbox(in io.Reader, out io.Writer) int {
	frames := newFrameReader(in)
	var st start
	if err := frames.next(&st); err != nil {
		fmt.Fprintln(os.Stderr, "run_code sandbox: no program:", err)
		return 2
	}
	// The bounds go on before the program is even parsed.
	if err := limitSelf(st.Limits); err != nil {
		fmt.Fprintln(os.Stderr, "run_code sandbox: cannot bound itself:", err)
		return 3
	}
	s := &sandbox{replies: newInbox(frames), out: out, pending: map[int]settle{}}
	d := s.guarded(st)
	if err := writeFrame(out, message{Done: &d}); err != nil {
		// A value JSON.stringify wrote and encoding/json will not carry
		// (nested past its 10,000 levels) is the program's to hear of,
		// not a sandbox that stopped without a word.
		d = done{Error: "the program's value cannot be sent: " + err.Error()}
		if writeFrame(out, message{Done: &d}) != nil {
			return 1
		}
	}
	return 0
}

// settle are the two ends of one call's promise.
type settle struct{ resolve, reject func(any) error }

type sandbox struct {
	replies *inbox
	out     io.Writer
	vm      *goja.Runtime
	next    int
	pending map[int]settle
}

// guarded is run with a panic ended as the program's error. Showing a
// thrown value calls its getters outside any call of the engine's, where
// a getter that throws panics: left alone, the panic's text (the
// program's) would reach stderr, which the router reads for the
// runtime's words, so a program could crash its sandbox saying "out of
// memory" and pass for a bound.
func (s *sandbox) guarded(st start) (d done) {
	defer func() {
		if v := recover(); v != nil {
			if _, thrown := v.(*goja.Exception); thrown {
				d = done{Error: "the program threw a value that cannot be shown"}
				return
			}
			d = done{Error: fmt.Sprintf("the sandbox failed: %v", v)}
		}
	}()
	return s.run(st)
}

func (s *sandbox) run(st start) done {
	s.vm = goja.New()
	s.vm.SetMaxCallStackSize(2000)
	stop := s.watchCPU(st.Limits.CPU)
	defer stop()
	if err := s.install(); err != nil {
		return done{Error: err.Error()}
	}
	fnv, err := s.vm.RunScript("run_code", "(async function () {\n"+st.Code+"\n})")
	if err != nil {
		return done{Error: describe(err)}
	}
	fn, ok := goja.AssertFunction(fnv)
	if !ok {
		return done{Error: "the program is not a function body"}
	}
	v, err := fn(goja.Undefined())
	if err != nil {
		return done{Error: describe(err)}
	}
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return done{Error: "the program did not return a promise"}
	}
	// The event loop: the program runs until it awaits a tool; each
	// reply settles one promise, which runs the program on.
	for p.State() == goja.PromiseStatePending {
		if len(s.pending) == 0 {
			return done{Error: "the program awaits something that can never settle (only tool calls are asynchronous here)"}
		}
		r, err := s.replies.next()
		if err != nil {
			return done{Error: "lost the router: " + err.Error()}
		}
		if err := s.settle(r); err != nil {
			return done{Error: describe(err)}
		}
	}
	if p.State() == goja.PromiseStateRejected {
		return done{Error: "the program threw: " + s.text(p.Result())}
	}
	b, err := s.stringify(p.Result())
	if err != nil {
		return done{Error: "the returned value cannot be JSON: " + describe(err)}
	}
	return done{Value: b}
}

// install gives the program its globals, tools and console, and takes
// away the one the engine adds for Go: GoError, whose instances carry Go
// values.
func (s *sandbox) install() error {
	if err := s.vm.GlobalObject().Delete("GoError"); err != nil {
		return err
	}
	callFn := s.function("call", func(c goja.FunctionCall) goja.Value {
		name := c.Argument(0)
		if goja.IsUndefined(name) || goja.IsNull(name) {
			panic(s.vm.NewTypeError("tools.call needs a tool name"))
		}
		return s.call(name.String(), c.Argument(1))
	})
	proto := s.vm.Get("Object").ToObject(s.vm).Get("prototype").ToObject(s.vm)
	tools := s.vm.NewDynamicObject(toolsObject{s: s, call: callFn, proto: proto})
	if err := s.vm.Set("tools", tools); err != nil {
		return err
	}
	console := s.vm.NewObject()
	logFn := func(c goja.FunctionCall) goja.Value {
		line := ""
		for i, a := range c.Arguments {
			if i > 0 {
				line += " "
			}
			line += s.text(a)
		}
		if err := writeFrame(s.out, message{Log: &line}); err != nil {
			panic(s.plainError(err))
		}
		return goja.Undefined()
	}
	for _, name := range []string{"log", "info", "warn", "error", "debug"} {
		if err := console.Set(name, s.function(name, logFn)); err != nil {
			return err
		}
	}
	return s.vm.Set("console", console)
}

// function is a native function named as JavaScript names it. The engine
// names a Go function by reflection (the Go package path and symbol),
// and shows that name in the function's text, its name property and
// every stack trace that passes through it: the program would read the
// router's internals.
func (s *sandbox) function(name string, fn func(goja.FunctionCall) goja.Value) goja.Value {
	v := s.vm.ToValue(fn)
	_ = v.(*goja.Object).DefineDataProperty("name", s.vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return v
}

// toolsObject is the program's tools: any property is a function calling
// the tool of that name, except call, which takes the name, and the
// names the engine looks up on any object, which must not call a tool:
// whatever Object.prototype has (String(tools) reads toString), toJSON
// (JSON.stringify, so console.log) and then (await). Those read as on a
// plain object; a tool so named is reached with tools.call.
type toolsObject struct {
	s     *sandbox
	call  goja.Value
	proto *goja.Object // Object.prototype
}

func (t toolsObject) Get(key string) goja.Value {
	if key == "call" {
		return t.call
	}
	if !t.Has(key) {
		return nil // the prototype's, or undefined
	}
	return t.s.function(key, func(c goja.FunctionCall) goja.Value { return t.s.call(key, c.Argument(0)) })
}

// Has reports whether key names a tool.
func (t toolsObject) Has(key string) bool {
	return key != "then" && key != "toJSON" && t.proto.Get(key) == nil
}

func (toolsObject) Set(string, goja.Value) bool { return false }
func (toolsObject) Delete(string) bool          { return false }
func (toolsObject) Keys() []string              { return nil }

// call sends one tool call to the router and returns its promise.
func (s *sandbox) call(name string, args goja.Value) goja.Value {
	var raw json.RawMessage
	if !goja.IsUndefined(args) && !goja.IsNull(args) {
		b, err := s.stringify(args)
		if err != nil {
			panic(s.vm.NewTypeError("the arguments of " + name + " cannot be JSON: " + describe(err)))
		}
		raw = b
	}
	s.next++
	id := s.next
	p, resolve, reject := s.vm.NewPromise()
	s.pending[id] = settle{resolve, reject}
	if err := writeFrame(s.out, message{Call: &callFrame{ID: id, Name: name, Args: raw}}); err != nil {
		panic(s.plainError(err))
	}
	return s.vm.ToValue(p)
}

func (s *sandbox) settle(r reply) error {
	p, ok := s.pending[r.ID]
	if !ok {
		return fmt.Errorf("a reply to no call (%d)", r.ID)
	}
	delete(s.pending, r.ID)
	if r.Error != "" {
		e, err := s.vm.New(s.vm.Get("Error"), s.vm.ToValue(r.Error))
		if err != nil {
			return err
		}
		return p.reject(e)
	}
	parse, _ := goja.AssertFunction(s.vm.Get("JSON").ToObject(s.vm).Get("parse"))
	v, err := parse(goja.Undefined(), s.vm.ToValue(string(r.Result)))
	if err != nil {
		return p.reject(s.plainError(err))
	}
	return p.resolve(v)
}

// plainError is a JavaScript Error saying err. Not the engine's GoError:
// its value property is the Go error itself, and through the fields of
// one (json.MarshalerError's Type) the program reached Go's reflection.
func (s *sandbox) plainError(err error) *goja.Object {
	e, nerr := s.vm.New(s.vm.Get("Error"), s.vm.ToValue(err.Error()))
	if nerr != nil {
		return s.vm.NewTypeError(err.Error())
	}
	return e
}

// stringify is JSON.stringify; undefined becomes null.
func (s *sandbox) stringify(v goja.Value) (json.RawMessage, error) {
	fn, _ := goja.AssertFunction(s.vm.Get("JSON").ToObject(s.vm).Get("stringify"))
	out, err := fn(goja.Undefined(), v)
	if err != nil {
		return nil, err
	}
	if goja.IsUndefined(out) {
		return json.RawMessage("null"), nil
	}
	return json.RawMessage(out.String()), nil
}

// text is how console.log and errors show a value: strings as they are,
// errors as their message, anything else as JSON when it can be.
func (s *sandbox) text(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "undefined"
	}
	if o, ok := v.(*goja.Object); ok {
		if o.ClassName() == "Error" {
			return o.String()
		}
		if _, isFn := goja.AssertFunction(v); !isFn {
			if b, err := s.stringify(v); err == nil {
				return string(b)
			}
		}
	}
	return v.String()
}

// describe says what stopped the engine.
func describe(err error) string {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		return fmt.Sprint(ie.Value())
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return ex.Error()
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return "the program's call stack overflowed"
	}
	return err.Error()
}

// watchCPU interrupts the engine once the process has used limit of CPU
// time; RLIMIT_CPU (limitSelf) kills it outright one to two seconds
// later should the engine sit in a long built-in the interrupt cannot
// reach.
func (s *sandbox) watchCPU(limit time.Duration) func() {
	if limit <= 0 {
		return func() {}
	}
	quit := make(chan struct{})
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if cpuUsed() >= limit {
					s.vm.Interrupt(fmt.Sprintf("the program used its %s of CPU time", limit))
					return
				}
			}
		}
	}()
	return func() { close(quit) }
}

// tuneRuntime keeps the sandbox to one core. The memory bound is left
// to RLIMIT_AS alone: a soft limit (debug.SetMemoryLimit) near it only
// makes the collector thrash for seconds before the same end.
func tuneRuntime() { runtime.GOMAXPROCS(1) }

// inbox reads the router's replies as they come, whatever the program is
// doing, and keeps them until the event loop takes them. The router
// writes a reply while holding one of the run's call slots, and may stop
// reading the program's frames until a slot frees (its calls waiting for
// a slot hold a bounded size of arguments): were the reply to wait for
// the program to read it, while the program waits to write its next
// call, the run would hang to its wall time. Here a reply waits in the
// sandbox's own memory, which RLIMIT_AS bounds.
type inbox struct {
	mu    sync.Mutex
	queue []reply
	err   error
	ready chan struct{} // a reply or the error arrived
}

func newInbox(frames *frameReader) *inbox {
	b := &inbox{ready: make(chan struct{}, 1)}
	go func() {
		for {
			var r reply
			err := frames.next(&r)
			b.mu.Lock()
			if err != nil {
				b.err = err
			} else {
				b.queue = append(b.queue, r)
			}
			b.mu.Unlock()
			select {
			case b.ready <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return b
}

// next is the oldest reply not yet taken; once none is left, the error
// that ended the reading.
func (b *inbox) next() (reply, error) {
	for {
		b.mu.Lock()
		if len(b.queue) > 0 {
			r := b.queue[0]
			b.queue = b.queue[1:]
			b.mu.Unlock()
			return r, nil
		}
		err := b.err
		b.mu.Unlock()
		if err != nil {
			return reply{}, err
		}
		<-b.ready
	}
}
