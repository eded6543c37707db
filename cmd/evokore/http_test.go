package main_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

var listening = regexp.MustCompile(`streamable HTTP at http://([0-9.:\[\]]+)/mcp`)

// httpRouter starts `evokore serve --http 127.0.0.1:0` with a fixture
// child and env, and returns its base URL and process.
func httpRouter(t testing.TB, env ...string) (string, *exec.Cmd, *routertest.Buffer) {
	t.Helper()
	dir := t.TempDir()
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"fx": map[string]any{"command": testutil.FixtureServer(t)}}})
	cmd := exec.Command(testutil.Evokore(t), "serve", "--http", "127.0.0.1:0")
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home")}, env...)
	base, stderr := startHTTP(t, cmd)
	return base, cmd, stderr
}

// startHTTP starts cmd, an `evokore serve --http` on port 0, and returns
// its base URL once it listens, and its stderr.
func startHTTP(t testing.TB, cmd *exec.Cmd) (string, *routertest.Buffer) {
	t.Helper()
	stderr := &routertest.Buffer{}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(stderr, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case addr := <-found:
		return "http://" + addr, stderr
	case <-time.After(60 * time.Second):
		t.Fatalf("evokore did not start listening:\n%s", stderr.String())
	}
	return "", nil
}

type bearer struct {
	token string
	extra map[string]string
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	for k, v := range b.extra {
		req.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(req)
}

func connectWith(t testing.TB, endpoint, token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, opts)
	// Sessions are what these tests are about: the session protocol, not
	// the go-sdk client's sessionless default (see stateless_test.go).
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token: token}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

// do sends one request and returns status, headers and body.
func do(t *testing.T, method, url, token string, hdr map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

const listTools = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`

// A non-loopback address without authentication is refused before
// anything listens.
func TestServeHTTPRefusesNonLoopbackWithoutAuth(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(testutil.Evokore(t), "serve", "--http", "0.0.0.0:0")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home")}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "refusing to serve HTTP on 0.0.0.0:0 without authentication") {
		t.Fatalf("serve --http 0.0.0.0:0: %v\n%s", err, out)
	}
}

// Static bearer tokens: the public routes, the 401 contract, the Host and
// Origin checks and a session reached with a query string on /mcp.
func TestServeHTTPStaticTokenRoutesAndRebindingChecks(t *testing.T) {
	base, router, stderr := httpRouter(t, "EVOKORE_AUTH_REQUIRED=true", "EVOKORE_AUTH_TOKEN=first-token, s3cret-token")
	if code, _, body := do(t, "GET", base+"/health", "", nil, ""); code != 200 || body != `{"status":"ok","transport":"streamable-http"}`+"\n" {
		t.Errorf("/health: %d %s", code, body)
	}
	if code, _, body := do(t, "GET", base+"/nope", "s3cret-token", nil, ""); code != 404 || body != `{"error":"Not found"}`+"\n" {
		t.Errorf("/nope: %d %s", code, body)
	}
	if code, _, body := do(t, "GET", base+"/mcp", "s3cret-token", nil, ""); code != 400 || body != `{"error":"New sessions must be initialized with a POST request"}`+"\n" {
		t.Errorf("GET /mcp without a session: %d %s", code, body)
	}
	for _, token := range []string{"", "wrong-token", "s3cret-token-but-longer"} {
		code, hdr, body := do(t, "POST", base+"/mcp", token, nil, listTools)
		if code != 401 || !strings.HasPrefix(body, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Unauthorized","data":{"detail":`) ||
			hdr.Get("WWW-Authenticate") != `Bearer realm="evokore-mcp", resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"` {
			t.Errorf("token %q: %d %q %s", token, code, hdr.Get("WWW-Authenticate"), body)
		}
	}
	if code, _, _ := do(t, "GET", base+"/metrics", "", nil, ""); code != 401 {
		t.Errorf("/metrics without a token: %d", code)
	}
	// Each refusal is audited, with the reason and never the token.
	auditFile := filepath.Join(router.Dir, "home", "audit", "audit.jsonl")
	routertest.WaitFor(t, "auth failures in the audit log", func() bool {
		b, _ := os.ReadFile(auditFile)
		return strings.Count(string(b), `"eventType":"auth_failure"`) >= 4
	})
	if b, _ := os.ReadFile(auditFile); strings.Contains(string(b), "wrong-token") || !strings.Contains(string(b), `"remote":"127.0.0.1:`) {
		t.Errorf("audited auth failures:\n%s", b)
	}
	// DNS rebinding: a foreign Host or Origin is refused even with a token.
	if code, _, body := do(t, "POST", base+"/mcp", "s3cret-token", map[string]string{"Host": "evil.example:3100"}, listTools); code != 403 {
		t.Errorf("foreign Host: %d %s", code, body)
	}
	if code, _, body := do(t, "POST", base+"/mcp", "s3cret-token", map[string]string{"Origin": "https://evil.example"}, listTools); code != 403 {
		t.Errorf("foreign Origin: %d %s", code, body)
	}
	// The approvals feed dashboards connect to: behind the same token.
	wsURL := "ws" + strings.TrimPrefix(base, "http") + "/ws/approvals"
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	if _, res, err := websocket.Dial(wctx, wsURL, nil); err == nil || res == nil || res.StatusCode != 401 {
		t.Errorf("/ws/approvals without a token: %v %v", err, res)
	}
	feed, _, err := websocket.Dial(wctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer s3cret-token"}}})
	if err != nil {
		t.Fatalf("/ws/approvals with the token: %v", err)
	}
	if _, first, err := feed.Read(wctx); err != nil || !strings.HasPrefix(string(first), `{"type":"snapshot"`) {
		t.Errorf("/ws/approvals first frame: %s %v", first, err)
	}
	_ = feed.CloseNow()
	cs, err := connectWith(t, base+"/mcp?tenant=x", "s3cret-token", nil)
	if err != nil {
		t.Fatalf("connect with the token: %v\n%s", err, stderr.String())
	}
	if names := routertest.ToolNames(t, cs); len(names) == 0 {
		t.Errorf("no tools")
	}
	routertest.Call(t, cs, "proxy_server_status", map[string]any{})
	if code, _, body := do(t, "GET", base+"/metrics", "first-token", map[string]string{"Origin": "http://localhost:9999"}, ""); code != 200 || !strings.Contains(body, "evokore_sessions 1") ||
		!strings.Contains(body, `evokore_tool_calls_total{outcome="ok",server="",tool="proxy_server_status"} 1`) {
		t.Errorf("/metrics: %d\n%s", code, body)
	}
}

// jwks serves one RSA key as a JWKS and signs tokens with it.
type jwks struct {
	key *rsa.PrivateKey
	url string
}

func newJWKS(t testing.TB) *jwks {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	set, _ := json.Marshal(map[string]any{"keys": []map[string]any{{
		"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
		"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
	}}})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(set)
	}))
	t.Cleanup(ts.Close)
	return &jwks{key: key, url: ts.URL}
}

func (j *jwks) sign(t testing.TB, claims jwt.MapClaims) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "k1"
	s, err := tok.SignedString(j.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// JWTs are verified against the JWKS: issuer, audience and expiry are
// checked; sub scopes sessions to a tenant and role picks the RBAC role.
func TestServeHTTPJWTAuthAndTenantIsolation(t *testing.T) {
	keys := newJWKS(t)
	base, _, stderr := httpRouter(t, "EVOKORE_AUTH_REQUIRED=true", "EVOKORE_AUTH_MODE=jwt", "EVOKORE_OAUTH_JWKS_URI="+keys.url,
		"EVOKORE_OAUTH_ISSUER=https://issuer.test", "EVOKORE_OAUTH_AUDIENCE=evokore", "EVOKORE_TENANT_SCOPING=true")
	now := time.Now()
	claims := func(sub string, edit func(jwt.MapClaims)) string {
		c := jwt.MapClaims{"iss": "https://issuer.test", "aud": "evokore", "sub": sub, "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "role": "admin"}
		if edit != nil {
			edit(c)
		}
		return keys.sign(t, c)
	}
	for name, token := range map[string]string{
		"wrong audience": claims("alice", func(c jwt.MapClaims) { c["aud"] = "someone-else" }),
		"wrong issuer":   claims("alice", func(c jwt.MapClaims) { c["iss"] = "https://evil.test" }),
		"expired":        claims("alice", func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() }),
		"no expiry":      claims("alice", func(c jwt.MapClaims) { delete(c, "exp") }),
	} {
		if code, _, body := do(t, "POST", base+"/mcp", token, nil, listTools); code != 401 {
			t.Errorf("%s: %d %s", name, code, body)
		}
	}
	alice, bob := claims("alice", nil), claims("bob", nil)
	cs, err := connectWith(t, base+"/mcp", alice, nil)
	if err != nil {
		t.Fatalf("alice: %v\n%s", err, stderr.String())
	}
	routertest.ToolNames(t, cs)
	sid := cs.ID()
	want := `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found","data":{"sessionId":"` + sid + `"}},"id":null}` + "\n"
	if code, _, body := do(t, "POST", base+"/mcp", bob, map[string]string{"Mcp-Session-Id": sid}, listTools); code != 404 || body != want {
		t.Errorf("bob on alice's session: %d %s", code, body)
	}
	if code, _, body := do(t, "POST", base+"/mcp", alice, map[string]string{"Mcp-Session-Id": sid}, listTools); code != 200 {
		t.Errorf("alice on her session: %d %s", code, body)
	}
	code, _, body := do(t, "GET", base+"/.well-known/oauth-protected-resource/mcp", "", nil, "")
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		BearerMethods        []string `json:"bearer_methods_supported"`
	}
	if err := json.Unmarshal([]byte(body), &meta); code != 200 || err != nil || meta.Resource != base+"/mcp" ||
		len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != "https://issuer.test" || len(meta.BearerMethods) != 1 {
		t.Errorf("metadata: %d %s", code, body)
	}
}

// SIGTERM with a call in flight: the call finishes and answers, then the
// router exits cleanly.
func TestServeHTTPSIGTERMFinishesTheCallInFlight(t *testing.T) {
	base, cmd, stderr := httpRouter(t, "EVOKORE_TOOL_DISCOVERY_MODE=legacy")
	var signalled atomic.Bool
	cs, err := connectWith(t, base+"/mcp", "", &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		if signalled.CompareAndSwap(false, true) {
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	routertest.WaitFor(t, "the child to boot", func() bool { return strings.Contains(stderr.String(), "Proxy bootstrap complete") })
	params := &mcp.CallToolParams{Name: "fx_progress", Arguments: map[string]any{"steps": 60}}
	params.SetProgressToken("p")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || routertest.Text(res) != "done 60 steps" || !signalled.Load() {
		t.Fatalf("signalled %v; call: %v %q\n%s", signalled.Load(), err, routertest.Text(res), stderr.String())
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, stderr.String())
	}
}
