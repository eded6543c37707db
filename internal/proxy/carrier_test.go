package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A call whose arguments hold line breaks between their tokens (JSON
// allows them; an HTTP client may send them) reaches a stdio child as
// one line, and is answered: a line break written as it came would cut
// the request in two for a child that reads lines (the TypeScript SDK's
// do; the go-sdk's decodes a stream).
func TestArgumentsWithLineBreaksReachAStdioChildAsOneLine(t *testing.T) {
	everything := map[string]any{"command": "node", "args": []string{testutil.NPMServer(t, "server-everything"), "stdio"}}
	h := routertest.New(t, map[string]any{"fx": everything}, map[string]string{"EVOKORE_PROXY_REQUEST_TIMEOUT_MS": "20000"})
	h.Server.StartChildren(nil)
	h.Booted()
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx_echo","arguments":{` + "\n" +
		`  "message": "two\nlines"` + "\r\n" + `},"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"2026-07-28","` + mcp.MetaKeyClientCapabilities + `":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "fx_echo"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Result *mcp.CallToolResult
		Error  any
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || got.Result == nil {
		t.Fatalf("answer %+v, %v", got, err)
	}
	if text := routertest.Text(got.Result); got.Result.IsError || text != "Echo: two\nlines" {
		t.Errorf("fx_echo = %q (isError %v)", text, got.Result.IsError)
	}
}

// bearer hands out one token, and counts how often it was asked for.
type bearer struct{ asked atomic.Int32 }

func (b *bearer) TokenSource(context.Context) (oauth2.TokenSource, error) {
	b.asked.Add(1)
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "t0k3n", TokenType: "Bearer"}), nil
}

func (b *bearer) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	_ = resp.Body.Close()
	return nil
}

// tokenAuthorizer authorizes evokore to every HTTP child with one
// bearer; no child ever needs a login.
type tokenAuthorizer struct{ tokens *bearer }

func (a tokenAuthorizer) Handler(config.Server, string) auth.OAuthHandler { return a.tokens }
func (a tokenAuthorizer) Changed(string, string) <-chan struct{}          { return nil }
func (a tokenAuthorizer) Required(context.Context, config.Server, string) error {
	return errors.New("no login here")
}
func (a tokenAuthorizer) NeedsAuthorization(string, string) bool { return false }

// Options.Authorizer plugs into the HTTP carrier's http.Client: its
// token reaches every request a remote child gets, the calls' included,
// beside the configured headers, over streamable HTTP and SSE alike; a
// child that requires it does not connect without it.
func TestTheAuthorizerAuthorizesARemoteChild(t *testing.T) {
	addr := listening(t, func(addr string) *exec.Cmd { return exec.Command(testutil.ContentServer(t), "-http", addr) })
	sseAddr := listening(t, func(addr string) *exec.Cmd { return exec.Command(testutil.ContentServer(t), "-sse", addr) })
	var refused, served atomic.Int32
	front := func(addr string) string {
		fwd := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: addr})
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer t0k3n" || r.Header.Get("X-Configured") != "yes" {
				refused.Add(1)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			served.Add(1)
			fwd.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		return ts.URL
	}
	boot := func(transport, url string, a proxy.Authorizer) (*proxy.Supervisor, *catalog.Store) {
		cat := catalog.NewStore(nil, []string{"remote"})
		s := proxy.New(proxy.Options{
			Servers: []config.Server{{ID: "remote", Transport: transport, URL: url, Headers: map[string]string{"X-Configured": "yes"}}},
			Catalog: cat, BootTimeout: 20 * time.Second, RequestTimeout: 20 * time.Second, ShutdownGrace: time.Second,
			Authorizer: a,
		})
		t.Cleanup(s.Close)
		s.Start(nil)
		<-s.Booted()
		return s, cat
	}
	for _, tc := range []struct{ transport, url string }{
		{config.TransportHTTP, front(addr)},
		{config.TransportSSE, front(sseAddr)},
	} {
		tokens := &bearer{}
		s, cat := boot(tc.transport, tc.url, tokenAuthorizer{tokens})
		if st := s.Status()[0]; st.Status != proxy.StatusConnected {
			t.Fatalf("%s: the authorized child is %s: %s", tc.transport, st.Status, st.LastError)
		}
		entry, ok := cat.Snapshot().Lookup("remote_logs")
		if !ok {
			t.Fatalf("%s: remote_logs is not listed", tc.transport)
		}
		before := served.Load()
		res, err := s.CallTool(context.Background(), &router.Call{Entry: entry, Args: json.RawMessage(`{"count":0}`)})
		if err != nil || routertest.Text(res) != "logged 0" {
			t.Fatalf("%s: remote_logs = %q, %v", tc.transport, routertest.Text(res), err)
		}
		if served.Load() == before || refused.Load() != 0 || tokens.asked.Load() == 0 {
			t.Errorf("%s: served %d (the call %d), refused %d, tokens asked %d", tc.transport, served.Load(), served.Load()-before, refused.Load(), tokens.asked.Load())
		}
		if s, _ := boot(tc.transport, tc.url, nil); s.Status()[0].Status == proxy.StatusConnected {
			t.Errorf("%s: the child connected without its authorization", tc.transport)
		}
		refused.Store(0)
	}
}

// remoteFixture starts the fixture child serving streamable HTTP, and
// returns its address once it listens.
func remoteFixture(t *testing.T, args ...string) string {
	t.Helper()
	return listening(t, func(addr string) *exec.Cmd {
		return exec.Command(testutil.FixtureServer(t), append([]string{"-http", addr, "-name", "remote"}, args...)...)
	})
}

// listening starts the server cmd makes for an address, and returns the
// address once the server listens on it.
func listening(t *testing.T, cmd func(addr string) *exec.Cmd) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	remote := cmd(addr)
	if err := remote.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remote.Process.Kill(); _ = remote.Wait() })
	routertest.WaitFor(t, "the remote child to listen", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return addr
}

// A call to a remote child ends at the request timeout, as a call to a
// stdio child does, with the message that says so.
func TestACallToARemoteChildEndsAtTheRequestTimeout(t *testing.T) {
	const timeout = 500 * time.Millisecond
	addr := remoteFixture(t)
	cat := catalog.NewStore(nil, []string{"remote"})
	s := proxy.New(proxy.Options{
		Servers: []config.Server{{ID: "remote", Transport: config.TransportHTTP, URL: "http://" + addr + "/"}},
		Catalog: cat, BootTimeout: 20 * time.Second, RequestTimeout: timeout, ShutdownGrace: time.Second,
	})
	t.Cleanup(s.Close)
	s.Start(nil)
	<-s.Booted()
	entry, ok := cat.Snapshot().Lookup("remote_slow")
	if !ok {
		t.Fatalf("remote_slow is not listed: %+v", s.Status())
	}
	res, err := s.CallTool(context.Background(), &router.Call{Entry: entry, Args: json.RawMessage(`{"ms":20000}`)})
	if err != nil || !res.IsError || routertest.Text(res) != proxy.MsgCallTimeout("slow", "remote", timeout) {
		t.Errorf("remote_slow = %q, %v", routertest.Text(res), err)
	}
}
