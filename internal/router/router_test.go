package router_test

import (
	"context"
	"encoding/json"
	"errors"
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

func (o observer) Observe(_ context.Context, out router.Outcome) {
	if out.Refused {
		o.f.log = append(o.f.log, "refused:"+out.Call.Entry.Name)
		return
	}
	o.f.log = append(o.f.log, "observe:"+out.Call.Entry.Name)
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
	if got := strings.Join(f.log, " "); got != "a deny refused:fx_echo" {
		t.Errorf("ran %q; nothing after the stopping stage may run, and observers see it refused", got)
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

// Every outcome reaches every observer once, in order: a refused call
// as refused, with the refusal; a call that ran with its answer.
func TestObserversSeeEveryOutcomeInOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stages func(f *fixture) []router.Stage
		want   string
	}{
		{"ran", func(*fixture) []router.Stage { return nil }, "proxy:echo observe:fx_echo observe:fx_echo"},
		{"refused", func(f *fixture) []router.Stage { return []router.Stage{f.stage("deny", native.Errorf("no"), nil)} },
			"deny refused:fx_echo refused:fx_echo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			r := router.New(router.Options{
				Catalog:   f.store,
				Proxy:     dispatcher{f: f, res: ok("done")},
				Stages:    tc.stages(f),
				Observers: []router.Observer{observer{f}, nil, observer{f}},
			})
			if _, err := call(t, r, "fx_echo", `{}`); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(f.log, " "); got != tc.want {
				t.Errorf("order = %q\nwant    %q", got, tc.want)
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

// What a stage bound reaches the native handler that runs the call.
func TestBoundReachesTheNativeHandler(t *testing.T) {
	var bound string
	f := newFixture(t, func(_ context.Context, c *native.Call) (*mcp.CallToolResult, error) {
		bound = c.Bound
		return ok("ran"), nil
	})
	bind := router.StageFunc(func(_ context.Context, c *router.Call) (*mcp.CallToolResult, error) {
		c.Bound = "code-v1"
		return nil, nil
	})
	r := router.New(router.Options{Catalog: f.store, Natives: f.table, Stages: []router.Stage{bind}})
	if res, err := call(t, r, "describe_tool", `{}`); err != nil || res.IsError || bound != "code-v1" {
		t.Fatalf("call = %v, %v; the handler saw bound %q", res, err, bound)
	}
}
