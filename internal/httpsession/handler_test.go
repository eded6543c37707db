package httpsession_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/httpsession"
	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/sessionstore"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// twoRoles: alpha may call the child's echo, beta must have each call
// approved (token mode, so the token travels in the session's own
// channel and the test can try it in another session).
const twoRoles = `
roles:
  alpha:
    default_permission: allow
  beta:
    default_permission: allow
    overrides:
      fx_echo: require_approval
`

// httpRouter is a router with a fixture child of 20 generated tools,
// served over HTTP with identities taken from test headers.
func httpRouter(t *testing.T, store sessionstore.Store, refresh bool) (*routertest.Harness, http.Handler) {
	t.Helper()
	h, handler := coldHTTPRouter(t, store, refresh)
	h.Server.StartChildren(nil)
	return h, handler
}

// coldHTTPRouter is a router as `serve --http` starts it: its children
// boot when its first session initializes.
func coldHTTPRouter(t *testing.T, store sessionstore.Store, refresh bool) (*routertest.Harness, http.Handler) {
	t.Helper()
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"fx": routertest.Fixture(t, "-extra", "20")}})
	testutil.WriteFile(t, dir, "permissions.yml", twoRoles)
	h := routertest.NewWithConfig(t, dir, cfg, map[string]string{"EVOKORE_APPROVALS_MODE": "token", "EVOKORE_SESSION_TTL_MS": "60000"})
	handler := httpsession.New(h.Server, httpsession.Options{TTL: h.Settings.SessionTTL, Store: store, Refresh: refresh, Identify: func(r *http.Request) ingress.SessionOptions {
		return ingress.SessionOptions{Role: r.Header.Get("X-Test-Role"), Identity: session.Identity{Tenant: r.Header.Get("X-Test-Tenant")}}
	}})
	return h, handler
}

// headers adds test identity headers to every request of a client.
type headers struct {
	set  map[string]string
	base http.RoundTripper
}

func (h headers) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.set {
		req.Header.Set(k, v)
	}
	base := h.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(req)
}

type httpClient struct {
	cs      *mcp.ClientSession
	changed chan struct{}
}

func connectHTTP(t *testing.T, url string, set map[string]string) *httpClient {
	t.Helper()
	hc := &httpClient{changed: make(chan struct{}, 100)}
	c := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { hc.changed <- struct{}{} },
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: headers{set: set}}}, sessionEra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	hc.cs = cs
	return hc
}

func generated(i int) string { return fmt.Sprintf("fx_generated_%04d", i) }

// Sessions served at once over HTTP each see only their own tools,
// approvals and list_changed notifications: two, then twenty.
func TestHTTPConcurrentSessionsSeeOnlyTheirOwn(t *testing.T) {
	for _, n := range []int{2, 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h, handler := httpRouter(t, nil, false)
			h.Booted()
			ts := httptest.NewServer(handler)
			t.Cleanup(ts.Close)
			clients := make([]*httpClient, n)
			tokens := make([]string, n)
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				role := "alpha"
				if i%2 == 1 {
					role = "beta"
				}
				clients[i] = connectHTTP(t, ts.URL, map[string]string{"X-Test-Role": role})
				wg.Add(1)
				go func() {
					defer wg.Done()
					cs := clients[i].cs
					ctx := context.Background()
					if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "discover_tools", Arguments: map[string]any{"query": generated(i), "limit": 1}}); err != nil {
						errs <- err
						return
					}
					select {
					case <-clients[i].changed:
					case <-time.After(30 * time.Second):
						errs <- fmt.Errorf("session %d got no list_changed", i)
						return
					}
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx_echo", Arguments: map[string]any{"message": fmt.Sprint(i)}})
					if err != nil {
						errs <- err
						return
					}
					if role == "beta" {
						tokens[i] = routertest.ApprovalToken(t, res)
					} else if routertest.Text(res) != fmt.Sprintf("Echo: %d", i) {
						errs <- fmt.Errorf("alpha session %d: %q", i, routertest.Text(res))
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			for i, c := range clients {
				var mine []string
				for _, name := range routertest.ToolNames(t, c.cs) {
					if strings.HasPrefix(name, "fx_generated_") {
						mine = append(mine, name)
					}
				}
				if !slices.Equal(mine, []string{generated(i)}) {
					t.Errorf("session %d lists %v", i, mine)
				}
				if extra := len(c.changed); extra != 0 {
					t.Errorf("session %d got %d more list_changed notifications than its own", i, extra)
				}
			}
			// A beta session's token approves its own call only.
			for i := 1; i < n; i += 2 {
				other := (i + 2) % n
				if other == i || tokens[other] == "" {
					other = i
				} else {
					res := routertest.Call(t, clients[i].cs, "fx_echo", map[string]any{"message": fmt.Sprint(i), "_evokore_approval_token": tokens[other]})
					if text := routertest.Text(res); strings.HasPrefix(text, "Echo:") {
						t.Errorf("session %d ran with session %d's token: %q", i, other, text)
					}
				}
				res := routertest.Call(t, clients[i].cs, "fx_echo", map[string]any{"message": fmt.Sprint(i), "_evokore_approval_token": tokens[i]})
				if text := routertest.Text(res); text != fmt.Sprintf("Echo: %d", i) {
					t.Errorf("session %d with its own token: %q", i, text)
				}
			}
		})
	}
}

// switcher sends every request to the backend of the moment: a client
// keeps one URL while the replica behind it changes.
type switcher struct{ h atomic.Pointer[http.Handler] }

func (s *switcher) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*s.h.Load()).ServeHTTP(w, r) }
func (s *switcher) to(h http.Handler)                                { s.h.Store(&h) }

var rawID atomic.Int64

// rawPost sends one JSON-RPC message for a session and returns the
// status and body.
func rawPost(t *testing.T, url, sid string, set map[string]string) (int, string) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`, rawID.Add(1))
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	for k, v := range set {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func notFoundBody(sid string) string {
	b, _ := json.Marshal(sid)
	return `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found","data":{"sessionId":` + string(b) + `}},"id":null}` + "\n"
}

// A session started on one router continues on another that shares its
// store, with its role and activations; a session of another tenant is
// unknown; DELETE ends it everywhere; an expired one answers 404.
func TestHTTPSessionResumesOnAnotherRouter(t *testing.T) {
	store := sessionstore.NewMemory(time.Minute)
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	store.Now = func() time.Time { return time.Unix(0, now.Load()) }

	a, handlerA := httpRouter(t, store, true)
	b, handlerB := httpRouter(t, store, true)
	a.Booted()
	b.Booted()
	sw := &switcher{}
	sw.to(handlerA)
	ts := httptest.NewServer(sw)
	t.Cleanup(ts.Close)
	who := map[string]string{"X-Test-Role": "beta", "X-Test-Tenant": "acme"}
	c := connectHTTP(t, ts.URL, who)
	sid := c.cs.ID()
	routertest.Call(t, c.cs, "discover_tools", map[string]any{"query": generated(3), "limit": 1})

	// Another tenant cannot use it, here or on the other router.
	for _, h := range []http.Handler{handlerA, handlerB} {
		sw.to(h)
		if code, body := rawPost(t, ts.URL, sid, map[string]string{"X-Test-Tenant": "other"}); code != http.StatusNotFound || body != notFoundBody(sid) {
			t.Errorf("another tenant: %d %s", code, body)
		}
	}

	// Router A goes away; B serves the session.
	sw.to(handlerB)
	_ = a.Server.Close()
	if text := routertest.Text(routertest.Call(t, c.cs, generated(3), map[string]any{"message": "m"})); text != "generated_0003 ok" {
		t.Errorf("resumed call: %q", text)
	}
	var roles []string
	for _, s := range b.Server.Sessions() {
		roles = append(roles, s.ID+"="+s.Role)
	}
	if !slices.Contains(roles, sid+"=beta") {
		t.Errorf("router B sessions %v lack %s=beta", roles, sid)
	}
	if names := routertest.ToolNames(t, c.cs); !slices.Contains(names, generated(3)) {
		t.Errorf("resumed session lists %v", names)
	}
	// Its role came along: echo still needs approval.
	if res := routertest.Call(t, c.cs, "fx_echo", map[string]any{"message": "x"}); !res.IsError {
		t.Errorf("beta echo after resume ran: %q", routertest.Text(res))
	}

	// DELETE ends it: the store forgets it.
	_ = c.cs.Close()
	if _, err := store.Load(context.Background(), sid); err == nil {
		t.Errorf("session %s still stored after DELETE", sid)
	}
	if code, body := rawPost(t, ts.URL, sid, who); code != http.StatusNotFound || body != notFoundBody(sid) {
		t.Errorf("after DELETE: %d %s", code, body)
	}

	// Idle past the TTL in the store: 404, though B still serves it.
	d := connectHTTP(t, ts.URL, who)
	routertest.ToolNames(t, d.cs)
	now.Add(int64(2 * time.Minute))
	if code, body := rawPost(t, ts.URL, d.cs.ID(), who); code != http.StatusNotFound || body != notFoundBody(d.cs.ID()) {
		t.Errorf("expired: %d %s", code, body)
	}
	// Hostile ids are unknown ids.
	if code, _ := rawPost(t, ts.URL, "../../etc/passwd", who); code != http.StatusNotFound {
		t.Errorf("hostile id: %d", code)
	}
}

// Requests racing for one session another router started resume it once,
// and every one of them is answered.
func TestHTTPConcurrentRequestsResumeASessionOnce(t *testing.T) {
	store := sessionstore.NewMemory(time.Minute)
	a, handlerA := httpRouter(t, store, true)
	b, handlerB := httpRouter(t, store, true)
	tsA, tsB := httptest.NewServer(handlerA), httptest.NewServer(handlerB)
	t.Cleanup(tsA.Close)
	t.Cleanup(tsB.Close)
	c := connectHTTP(t, tsA.URL, map[string]string{"X-Test-Role": "alpha"})
	sid := c.cs.ID()
	_ = a.Server.Close()
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = rawPost(t, tsB.URL, sid, map[string]string{"X-Test-Role": "alpha"})
		}()
	}
	wg.Wait()
	for i, code := range codes {
		if code != http.StatusOK {
			t.Errorf("request %d: %d", i, code)
		}
	}
	n := 0
	for _, s := range b.Server.Sessions() {
		if s.ID == sid {
			n++
		}
	}
	if n != 1 {
		t.Errorf("router B serves session %s %d times", sid, n)
	}
}

// A replica whose first contact is a resumed session's call boots its
// children for it and answers the call.
func TestHTTPResumeOnAColdRouterBootsItsChildren(t *testing.T) {
	store := sessionstore.NewMemory(time.Minute)
	a, handlerA := httpRouter(t, store, true)
	a.Booted()
	_, handlerB := coldHTTPRouter(t, store, true)
	sw := &switcher{}
	sw.to(handlerA)
	ts := httptest.NewServer(sw)
	t.Cleanup(ts.Close)
	c := connectHTTP(t, ts.URL, map[string]string{"X-Test-Role": "beta", "X-Test-Tenant": "acme"})
	sw.to(handlerB)
	if text := routertest.Text(routertest.Call(t, c.cs, generated(3), map[string]any{"message": "m"})); text != "generated_0003 ok" {
		t.Errorf("first call on the cold router: %q", text)
	}
}

// byMethod sends a session's initialized notification to one handler and
// every other request to another, as a round-robin proxy may.
type byMethod struct{ initialized, rest http.Handler }

func (b byMethod) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if strings.Contains(string(body), `"notifications/initialized"`) {
		b.initialized.ServeHTTP(w, r)
		return
	}
	b.rest.ServeHTTP(w, r)
}

// Behind a proxy, a session's initialized notification may reach another
// replica than its initialize: the replica that answered the initialize
// boots its children all the same, and the other resumes the session on
// that notification without playing it twice.
func TestHTTPInitializedOnAnotherReplica(t *testing.T) {
	store := sessionstore.NewMemory(time.Minute)
	a, handlerA := coldHTTPRouter(t, store, true)
	b, handlerB := coldHTTPRouter(t, store, true)
	rest := &switcher{}
	rest.to(handlerA)
	ts := httptest.NewServer(byMethod{initialized: handlerB, rest: rest})
	t.Cleanup(ts.Close)
	c := connectHTTP(t, ts.URL, map[string]string{"X-Test-Role": "beta", "X-Test-Tenant": "acme"})
	if text := routertest.Text(routertest.Call(t, c.cs, generated(3), map[string]any{"message": "m"})); text != "generated_0003 ok" {
		t.Errorf("call on the router that answered the initialize: %q", text)
	}
	// B handles the session's messages in order: once this call is
	// answered, the notification before it has been handled.
	rest.to(handlerB)
	if text := routertest.Text(routertest.Call(t, c.cs, generated(4), map[string]any{"message": "m"})); text != "generated_0004 ok" {
		t.Errorf("call on the router that resumed on the notification: %q", text)
	}
	if log := b.Stderr.String(); strings.Contains(log, "duplicate initialized notification") {
		t.Errorf("the resuming router saw the initialized notification twice:\n%s", log)
	}
	if log := a.Stderr.String(); strings.Contains(log, "duplicate initialized notification") {
		t.Errorf("router A:\n%s", log)
	}
}

// A session resumed on another replica starts from the state its client
// set up on the first, nothing replayed to it: the log level the client
// chose there still lets the child's log messages through, on the
// resumed session's own event stream.
func TestHTTPResumedSessionKeepsItsClientsLogLevel(t *testing.T) {
	store := sessionstore.NewMemory(time.Minute)
	a, handlerA := httpRouter(t, store, true)
	b, handlerB := httpRouter(t, store, true)
	a.Booted()
	b.Booted()
	sw := &switcher{}
	sw.to(handlerA)
	ts := httptest.NewServer(sw)
	t.Cleanup(ts.Close)
	who := map[string]string{"X-Test-Role": "alpha"}
	c := connectHTTP(t, ts.URL, who)
	//lint:ignore SA1019 logging passes through on purpose (docs/decisions.md)
	if err := c.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	sw.to(handlerB)
	_ = a.Server.Close()
	// A progress token takes the call the SDK's way: its log message
	// rides the call's own stream.
	code, _, got := post(t, ts.URL, c.cs.ID(), `{"jsonrpc":"2.0","id":"l","method":"tools/call","params":{"name":"fx_log","arguments":{"message":"kept level"},"_meta":{"progressToken":"t"}}}`, who)
	if code != http.StatusOK || !strings.Contains(got, `"method":"notifications/message"`) || !strings.Contains(got, "kept level") {
		t.Errorf("a logging call on the resumed session: %d %s", code, got)
	}
}
