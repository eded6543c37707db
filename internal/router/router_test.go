package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// fixture is a router over one native tool (describe_tool, bound to
// handler) and one proxied tool (fx_echo, dispatched to proxy).
type fixture struct {
	store *catalog.Store
	table *native.Table
	log   []string
}

func newFixture(t *testing.T, handler native.Handler) *fixture {
	t.Helper()
	f := &fixture{table: &native.Table{}}
	f.table.Bind(native.DescribeTool, handler)
	f.store = catalog.NewStore(nil, []string{"fx"})
	f.store.SetNatives(f.table.Entries())
	f.store.SetServerTools("fx", []*mcp.Tool{{Name: "echo", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}}})
	return f
}

func (f *fixture) stage(name string, res *mcp.CallToolResult, err error) router.Stage {
	return router.StageFunc(func(context.Context, *router.Call) (*mcp.CallToolResult, error) {
		f.log = append(f.log, name)
		return res, err
	})
}

type dispatcher struct {
	f   *fixture
	res *mcp.CallToolResult
	err error
}

func (d dispatcher) CallTool(_ context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	d.f.log = append(d.f.log, "proxy:"+c.Entry.Original)
	return d.res, d.err
}

type observer struct{ f *fixture }

func (o observer) Observe(_ context.Context, c *router.Call, res *mcp.CallToolResult, err error) {
	o.f.log = append(o.f.log, "observe:"+c.Entry.Name)
}

func call(t *testing.T, r *router.Router, name, args string) (*mcp.CallToolResult, error) {
	t.Helper()
	return r.Call(context.Background(), session.New("s", ""), &mcp.CallToolParamsRaw{Name: name, Arguments: json.RawMessage(args)})
}

func ok(text string) *mcp.CallToolResult { return native.Text("%s", text) }

func TestStagesRunInOrderAndNilIsSkipped(t *testing.T) {
	f := newFixture(t, nil)
	r := router.New(router.Options{
		Catalog:   f.store,
		Proxy:     dispatcher{f: f, res: ok("done")},
		Stages:    []router.Stage{f.stage("a", nil, nil), nil, f.stage("b", nil, nil), f.stage("c", nil, nil)},
		Observers: []router.Observer{observer{f}, nil},
	})
	res, err := call(t, r, "fx_echo", `{}`)
	if err != nil || res.IsError {
		t.Fatalf("call = %v, %v", res, err)
	}
	if got := strings.Join(f.log, " "); got != "a b c proxy:echo observe:fx_echo" {
		t.Errorf("order = %q", got)
	}
}

func TestStageResultEndsTheCall(t *testing.T) {
	f := newFixture(t, nil)
	r := router.New(router.Options{
		Catalog:   f.store,
		Proxy:     dispatcher{f: f, res: ok("done")},
		Stages:    []router.Stage{f.stage("a", nil, nil), f.stage("deny", native.Errorf("no"), nil), f.stage("c", nil, nil)},
		Observers: []router.Observer{observer{f}},
	})
	res, err := call(t, r, "fx_echo", `{}`)
	if err != nil || !res.IsError {
		t.Fatalf("call = %v, %v", res, err)
	}
	if got := strings.Join(f.log, " "); got != "a deny" {
		t.Errorf("ran %q; nothing after the stopping stage may run, not even observers", got)
	}
}

func TestErrorsReachTheWireWithACode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code int64
		msg  string
	}{
		{"plain", errors.New("boom"), jsonrpc.CodeInternalError, "boom"},
		{"cancelled", context.Canceled, jsonrpc.CodeInternalError, "request cancelled"},
		{"wire", &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "limited"}, jsonrpc.CodeInvalidRequest, "limited"},
		{"not found", &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "gone"}, jsonrpc.CodeMethodNotFound, "gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, where := range []string{"stage", "dispatch"} {
				f := newFixture(t, nil)
				o := router.Options{Catalog: f.store, Proxy: dispatcher{f: f}}
				if where == "stage" {
					o.Stages = []router.Stage{f.stage("x", nil, tc.err)}
				} else {
					o.Proxy = dispatcher{f: f, err: tc.err}
				}
				_, err := call(t, router.New(o), "fx_echo", `{}`)
				var we *jsonrpc.Error
				if !errors.As(err, &we) || we.Code != tc.code || we.Message != tc.msg {
					t.Errorf("%s error %v → %#v, want code %d %q", where, tc.err, we, tc.code, tc.msg)
				}
			}
		})
	}
}

func TestUnknownToolIsMethodNotFound(t *testing.T) {
	f := newFixture(t, nil)
	_, err := call(t, router.New(router.Options{Catalog: f.store}), "nope", `{}`)
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeMethodNotFound || we.Message != "Unknown tool: nope" {
		t.Errorf("unknown tool → %v", err)
	}
}

func TestBeforeDispatchRunsAfterEveryStage(t *testing.T) {
	f := newFixture(t, nil)
	hook := router.StageFunc(func(_ context.Context, c *router.Call) (*mcp.CallToolResult, error) {
		f.log = append(f.log, "register")
		c.BeforeDispatch(func() (*mcp.CallToolResult, error) {
			f.log = append(f.log, "hook")
			return nil, nil
		})
		return nil, nil
	})
	r := router.New(router.Options{Catalog: f.store, Proxy: dispatcher{f: f, res: ok("x")}, Stages: []router.Stage{hook, f.stage("later", nil, nil)}})
	if _, err := call(t, r, "fx_echo", `{}`); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.log, " "); got != "register later hook proxy:echo" {
		t.Errorf("order = %q", got)
	}

	// A later stage's refusal means the hook never runs (an approval is
	// not used up by a rate-limited call).
	f.log = nil
	r = router.New(router.Options{Catalog: f.store, Proxy: dispatcher{f: f, res: ok("x")}, Stages: []router.Stage{hook, f.stage("refuse", native.Errorf("limited"), nil)}})
	if res, _ := call(t, r, "fx_echo", `{}`); !res.IsError {
		t.Fatal("the refusal was lost")
	}
	if got := strings.Join(f.log, " "); got != "register refuse" {
		t.Errorf("ran %q", got)
	}
}

func TestMiddlewareFirstIsOutermost(t *testing.T) {
	f := newFixture(t, nil)
	mw := func(name string) router.Middleware {
		return func(next router.Dispatch) router.Dispatch {
			return func(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
				f.log = append(f.log, name+">")
				res, err := next(ctx, c)
				f.log = append(f.log, "<"+name)
				return res, err
			}
		}
	}
	r := router.New(router.Options{Catalog: f.store, Proxy: dispatcher{f: f, res: ok("x")}, Middleware: []router.Middleware{mw("outer"), nil, mw("inner")}})
	if _, err := call(t, r, "fx_echo", `{}`); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.log, " "); got != "outer> inner> proxy:echo <inner <outer" {
		t.Errorf("order = %q", got)
	}
}

func TestValidateListsEveryViolation(t *testing.T) {
	f := newFixture(t, nil)
	r := router.New(router.Options{Catalog: f.store, Proxy: dispatcher{f: f, res: ok("x")}, Stages: []router.Stage{router.Validate}})
	res, err := call(t, r, "fx_echo", `{"n":"three"}`)
	if err != nil || !res.IsError || !strings.HasPrefix(resultText(res), "Invalid arguments for 'fx_echo':\n- ") {
		t.Errorf("invalid arguments → %v %v", res, err)
	}
	if len(f.log) != 0 {
		t.Errorf("an invalid call was dispatched: %v", f.log)
	}
}

func TestRecoverAnswersAPanicAndKeepsServing(t *testing.T) {
	panics := 0
	f := newFixture(t, func(context.Context, *native.Call) (*mcp.CallToolResult, error) {
		panics++
		if panics == 1 {
			panic("corrupt store")
		}
		return ok("fine"), nil
	})
	var reported any
	r := router.New(router.Options{Catalog: f.store, Natives: f.table,
		OnPanic: func(_ *router.Call, v any, stack []byte) {
			if len(stack) == 0 {
				t.Error("no stack reported")
			}
			reported = v
		},
	})
	_, err := call(t, r, describeTool, `{}`)
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInternalError || reported != "corrupt store" {
		t.Errorf("panic → %v (reported %v)", err, reported)
	}
	if res, err := call(t, r, describeTool, `{}`); err != nil || resultText(res) != "fine" {
		t.Errorf("next call = %v %v", res, err)
	}
}

func TestNativeDeadlineAnswersABlockedHandler(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFixture(t, func(ctx context.Context, _ *native.Call) (*mcp.CallToolResult, error) {
		<-release // ignores its context, as a read of a FIFO would
		return ok("late"), nil
	})
	r := router.New(router.Options{Catalog: f.store, Natives: f.table, Proxy: dispatcher{f: f, res: ok("proxied")},
		NativeTimeout: 50 * time.Millisecond})
	res, err := call(t, r, describeTool, `{}`)
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "did not finish within 50ms") {
		t.Errorf("blocked native → %v %v", res, err)
	}
	// Proxied calls keep their own timeout.
	if res, err := call(t, r, "fx_echo", `{}`); err != nil || resultText(res) != "proxied" {
		t.Errorf("proxied call → %v %v", res, err)
	}
}

func TestDispatchBySource(t *testing.T) {
	f := newFixture(t, func(context.Context, *native.Call) (*mcp.CallToolResult, error) { return ok("native"), nil })
	r := router.New(router.Options{Catalog: f.store, Natives: f.table})
	if res, err := call(t, r, describeTool, `{}`); err != nil || resultText(res) != "native" {
		t.Errorf("native → %v %v", res, err)
	}
	_, err := call(t, r, "fx_echo", `{}`)
	if err == nil || err.Error() != "Tool not found in proxy registry: fx_echo" {
		t.Errorf("proxied without a supervisor → %v", err)
	}
}

const describeTool = "describe_tool"

func resultText(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// A quarantined tool (its definition changed since an operator accepted
// it) is refused with the quarantine message before anything else runs;
// a tool without one passes.
func TestQuarantineStageRefusesAHeldTool(t *testing.T) {
	held := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}})
	held.Quarantine = "Tool 'fx_echo' is quarantined: its definition changed."
	_, err := router.Quarantine.Check(context.Background(), &router.Call{Entry: held, Session: session.New("s", "")})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidRequest || we.Message != held.Quarantine {
		t.Errorf("quarantined: %v", err)
	}
	free := catalog.NewProxyEntry("fx", &mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}})
	if res, err := router.Quarantine.Check(context.Background(), &router.Call{Entry: free, Session: session.New("s", "")}); res != nil || err != nil {
		t.Errorf("a tool without quarantine is refused: %v %v", res, err)
	}
}

// A plugin tool with no plugin host is an unknown tool, not a crash.
func TestPluginToolWithoutAHostIsUnknown(t *testing.T) {
	f := newFixture(t, func(context.Context, *native.Call) (*mcp.CallToolResult, error) { return ok("native"), nil })
	r := router.New(router.Options{Catalog: f.store, Natives: f.table})
	e := catalog.NewEntry(&mcp.Tool{Name: "hello_greet", InputSchema: map[string]any{"type": "object"}}, catalog.SourcePlugin)
	_, err := r.Run(context.Background(), &router.Call{Entry: e, Session: session.New("s", ""), Args: json.RawMessage(`{}`)})
	if err == nil || !strings.Contains(err.Error(), "hello_greet") {
		t.Errorf("plugin tool without a host: %v", err)
	}
}

type recorder struct {
	f    *fixture
	name string
}

func (o recorder) Observe(_ context.Context, c *router.Call, res *mcp.CallToolResult, err error) {
	o.f.log = append(o.f.log, o.name+":"+c.Entry.Name)
}

func (o recorder) Refused(_ context.Context, c *router.Call, res *mcp.CallToolResult, err error) {
	o.f.log = append(o.f.log, o.name+"-refused:"+c.Entry.Name)
}

// A caller that delivers the answer itself gets it once, after the
// observers (cooldowns, refunds are in force for its next call) and
// before the recorders; refused calls likewise.
func TestDeliverComesBetweenObserversAndRecorders(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stages func(f *fixture) []router.Stage
		want   string
	}{
		{"ran", func(*fixture) []router.Stage { return nil }, "proxy:echo observe:fx_echo deliver:done record:fx_echo"},
		{"refused", func(f *fixture) []router.Stage { return []router.Stage{f.stage("deny", native.Errorf("no"), nil)} },
			"deny observer-refused:fx_echo deliver:no record-refused:fx_echo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			r := router.New(router.Options{
				Catalog:   f.store,
				Proxy:     dispatcher{f: f, res: ok("done")},
				Stages:    tc.stages(f),
				Observers: []router.Observer{recorder{f, "observer"}},
				Recorders: []router.Observer{recorder{f, "record"}, nil},
			})
			entry, _ := f.store.Snapshot().Lookup("fx_echo")
			c := &router.Call{Entry: entry, Session: session.New("s", ""), Args: json.RawMessage(`{}`)}
			c.Deliver = func(res *mcp.CallToolResult, err error) { f.log = append(f.log, "deliver:"+resultText(res)) }
			if _, err := r.Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(strings.Join(f.log, " "), "observer:", "observe:")
			if got != tc.want {
				t.Errorf("order = %q\nwant    %q", got, tc.want)
			}
			if c.Deliver != nil {
				t.Error("Deliver is still set: a caller would answer twice")
			}
		})
	}
}

// Note builds a value once per call, however many observers ask.
func TestNoteBuildsOncePerCall(t *testing.T) {
	c := &router.Call{}
	builds := 0
	build := func() any { builds++; return builds }
	for range 3 {
		if c.Note("k", build) != 1 {
			t.Fatalf("note rebuilt: %d builds", builds)
		}
	}
	if c.Note("other", build) != 2 {
		t.Fatalf("another key shared a note: %d builds", builds)
	}
	if (&router.Call{}).Note("k", build) != 3 {
		t.Fatal("a new call reused another call's note")
	}
}

// starter is a Starter that keeps the done it is given, for the test to
// call; with decline it starts nothing, with panics it panics.
type starter struct {
	dispatcher
	decline, panics bool
	done            chan func(*mcp.CallToolResult, error)
}

func (s starter) StartCall(_ context.Context, c *router.Call, done func(*mcp.CallToolResult, error)) bool {
	if s.panics {
		panic("bad child state")
	}
	if s.decline {
		return false
	}
	s.f.log = append(s.f.log, "start:"+c.Entry.Original)
	s.done <- done
	return true
}

// startCall runs Start for fx_echo; ended is closed when the call has
// ended.
func startCall(t *testing.T, r *router.Router, f *fixture, ended chan<- struct{}) {
	t.Helper()
	entry, _ := f.store.Snapshot().Lookup("fx_echo")
	c := &router.Call{Entry: entry, Session: session.New("s", ""), Args: json.RawMessage(`{}`),
		Deliver: func(res *mcp.CallToolResult, err error) { f.log = append(f.log, "deliver:"+resultText(res)) }}
	r.Start(context.Background(), c, func() { f.log = append(f.log, "ended"); close(ended) })
}

func (f *fixture) around(ctx context.Context, c *router.Call) (context.Context, func(*mcp.CallToolResult, error)) {
	f.log = append(f.log, "enter")
	return ctx, func(res *mcp.CallToolResult, _ error) { f.log = append(f.log, "exit:"+resultText(res)) }
}

// A call a Starter takes returns before its outcome; the outcome then
// runs the rest of the pipeline, in Run's order, on the goroutine it
// arrives on, once however often it is reported.
func TestStartFinishesACallWhereItsOutcomeArrives(t *testing.T) {
	f := newFixture(t, nil)
	st := starter{dispatcher: dispatcher{f: f}, done: make(chan func(*mcp.CallToolResult, error), 1)}
	r := router.New(router.Options{Catalog: f.store, Proxy: st, Around: []router.Around{f.around},
		Observers: []router.Observer{observer{f}}, Recorders: []router.Observer{observer{f}}})
	ended := make(chan struct{})
	startCall(t, r, f, ended)
	if got := strings.Join(f.log, " "); got != "enter start:echo" {
		t.Fatalf("before the outcome: %q", got)
	}
	done := <-st.done
	go func() {
		done(ok("answer"), nil)
		done(ok("again"), nil)
	}()
	<-ended
	if got := strings.Join(f.log, " "); got != "enter start:echo exit:answer observe:fx_echo deliver:answer observe:fx_echo ended" {
		t.Errorf("pipeline = %q", got)
	}
}

// What a Starter does not take, a refused call, a panicking Starter and
// a router with Middleware all end before Start returns, as Run does.
func TestStartRunsSynchronouslyWhenTheCallIsNotStarted(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   func(f *fixture) starter
		opts func(f *fixture, o *router.Options)
		want string
	}{
		{"declined", func(f *fixture) starter { return starter{dispatcher: dispatcher{f: f, res: ok("sync")}, decline: true} },
			nil, "enter proxy:echo exit:sync deliver:sync ended"},
		{"refused", func(f *fixture) starter { return starter{dispatcher: dispatcher{f: f}} },
			func(f *fixture, o *router.Options) { o.Stages = []router.Stage{f.stage("deny", ok("denied"), nil)} }, "deny deliver:denied ended"},
		{"panicked", func(f *fixture) starter { return starter{dispatcher: dispatcher{f: f}, panics: true} },
			func(f *fixture, o *router.Options) {
				o.OnPanic = func(_ *router.Call, v any, _ []byte) { f.log = append(f.log, fmt.Sprint("panic:", v)) }
			}, "enter panic:bad child state exit: deliver: ended"},
		{"middleware", func(f *fixture) starter { return starter{dispatcher: dispatcher{f: f, res: ok("wrapped")}} },
			func(f *fixture, o *router.Options) {
				o.Middleware = []router.Middleware{func(next router.Dispatch) router.Dispatch { return next }}
			}, "enter proxy:echo exit:wrapped deliver:wrapped ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			o := router.Options{Catalog: f.store, Proxy: tc.st(f), Around: []router.Around{f.around}}
			if tc.opts != nil {
				tc.opts(f, &o)
			}
			ended := make(chan struct{})
			startCall(t, router.New(o), f, ended)
			select {
			case <-ended:
			default:
				t.Fatal("Start returned before the call ended")
			}
			if got := strings.Join(f.log, " "); got != tc.want {
				t.Errorf("pipeline = %q, want %q", got, tc.want)
			}
		})
	}
}
