package main_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/oauthtest"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// subjectCaller is one authenticated user's sessions with the replicas,
// and every authorization link the router asked it to open.
type subjectCaller struct {
	t     *testing.T
	who   string
	token string
	// answer is how the user answers a link: sign in and accept, or
	// decline.
	answer func(ctx context.Context, url string) string

	mu      sync.Mutex
	prompts []string
}

// session connects the user to one replica, as a client that takes URL
// elicitation.
func (c *subjectCaller) session(base string) *mcp.ClientSession {
	c.t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: c.who, Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			c.mu.Lock()
			c.prompts = append(c.prompts, req.Params.URL)
			c.mu.Unlock()
			return &mcp.ElicitResult{Action: c.answer(ctx, req.Params.URL)}, nil
		},
	})
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: c.token}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		c.t.Fatalf("%s: %v", c.who, err)
	}
	c.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func (c *subjectCaller) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.prompts)
}

// record calls the child's record tool as the user, naming them.
func (c *subjectCaller) record(cs *mcp.ClientSession) *mcp.CallToolResult {
	c.t.Helper()
	res, err := c.try(cs)
	if err != nil {
		c.t.Fatalf("%s's call: %v", c.who, err)
	}
	return res
}

// try is record's call, its error returned (from any goroutine).
func (c *subjectCaller) try(cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: "remote_record", Arguments: map[string]any{"who": c.who}})
}

// Per-subject upstream credentials across replicas (issue 48's
// acceptance): three `serve --http` replicas share one Redis; a
// subject-scoped HTTP child behind a real OpenID provider records the
// token of every call. alice consents once, through the link the
// replica she called asks her to open, and her calls on every replica
// reach the child with her token. bob, calling while alice's login is
// still open, is never shown alice's link; declining his own, his call
// does not reach the child at all; once he consents, his calls go with
// his own token and never with alice's, nor alice's with his.
func TestSubjectTokensStayTheirSubjectsAcrossReplicas(t *testing.T) {
	browser := oauthtest.Browser(t)
	p := oauthtest.NewProvider(t)
	child := oauthtest.NewChild(t, p, oauthtest.ChildOptions{})
	bin := testutil.Evokore(t)
	redisURL := testutil.RedisServer(t)
	keys := newJWKS(t)
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"remote": map[string]any{
		"type": "http", "url": child.URL, "scope": "subject", "cooldownMs": 0, // a declined call is no loop to cool down
		"oauth": map[string]any{"clientId": p.ClientID, "clientSecret": "${REMOTE_SECRET}", "callbackPort": p.CallbackPort},
	}}})
	keyFile := testutil.WriteFile(t, dir, "replicas.key", strings.Repeat("k3y-shared-by-replicas-", 3))
	if err := os.Chmod(keyFile, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"EVOKORE_MCP_CONFIG_PATH=" + cfg, "REMOTE_SECRET=" + p.ClientSecret, "EVOKORE_TOOL_DISCOVERY_MODE=legacy"}

	// The router's own authorization lists the child's tools (an
	// instance serves only what its template listed): the operator signs
	// in once, and each replica's home gets the token file.
	homes := []string{filepath.Join(dir, "r0"), filepath.Join(dir, "r1"), filepath.Join(dir, "r2")}
	operatorLogin(t, bin, homes[0], env, browser)
	operatorFiles, _ := filepath.Glob(filepath.Join(homes[0], "oauth", "*.json"))
	if len(operatorFiles) != 1 {
		t.Fatalf("operator token files: %v", operatorFiles)
	}
	operatorToken, _ := os.ReadFile(operatorFiles[0])
	for _, h := range homes[1:] {
		if err := os.MkdirAll(filepath.Join(h, "oauth"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h, "oauth", filepath.Base(operatorFiles[0])), operatorToken, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	var replicas []*replica
	for _, h := range homes {
		replicas = append(replicas, startReplica(t, bin, h, append(slices.Clone(env),
			"EVOKORE_AUTH_REQUIRED=true", "EVOKORE_AUTH_MODE=jwt", "EVOKORE_OAUTH_JWKS_URI="+keys.url,
			"EVOKORE_OAUTH_AUDIENCE=evokore", "EVOKORE_TENANT_SCOPING=true",
			"EVOKORE_SESSION_STORE=redis", "EVOKORE_REDIS_URL="+redisURL, "EVOKORE_REDIS_KEY_PREFIX=subj:",
			"EVOKORE_APPROVAL_KEY_FILE="+keyFile)))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, r := range replicas {
				t.Logf("replica %d output:\n%s", i, r.out.String())
			}
		}
	})
	base := func(i int) string { return "http://" + replicas[i].addr }
	jwtFor := func(sub string) string {
		return keys.sign(t, jwt.MapClaims{"aud": "evokore", "sub": sub, "exp": time.Now().Add(time.Hour).Unix(), "role": "admin"})
	}

	signIn := oauthtest.SignIn(browser)
	bob := &subjectCaller{t: t, who: "bob", token: jwtFor("bob"), answer: func(context.Context, string) string { return "decline" }}
	// bob's call while alice's login is open on replica 0, on the same
	// replica: it fails (the login's redirect port is alice's until she
	// is done), and is never asked with her link.
	var bobPending *mcp.CallToolResult
	var bobPendingErr error
	bobEarly := bob.session(base(0))
	alice := &subjectCaller{t: t, who: "alice", token: jwtFor("alice")}
	alice.answer = func(ctx context.Context, url string) string {
		bobPending, bobPendingErr = bob.try(bobEarly)
		if err := signIn(ctx, url); err != nil {
			t.Errorf("alice's sign-in at %s: %v", url, err)
			return "cancel"
		}
		return "accept"
	}

	// alice consents once, on replica 0; her calls on every replica go.
	for i := range 3 {
		cs := alice.session(base(i))
		waitTools(t, cs, "remote_record")
		if res := alice.record(cs); res.IsError || routertest.Text(res) != "recorded alice" {
			t.Fatalf("alice's call on replica %d: %s", i, routertest.Text(res))
		}
	}
	if got := alice.seen(); len(got) != 1 {
		t.Fatalf("alice was asked %d times (%v), want once", len(got), got)
	}
	aliceURL := alice.seen()[0]
	if bobPendingErr == nil && !bobPending.IsError {
		t.Errorf("bob's call while alice's login was open ran: %s", routertest.Text(bobPending))
	}
	t.Logf("bob's call while alice's login was open: %v %s", bobPendingErr, routertest.Text(bobPending))

	// bob declines his own prompt: his call does not reach the child.
	if res := bob.record(bob.session(base(1))); !res.IsError || !strings.Contains(routertest.Text(res), "needs your own authorization") {
		t.Errorf("bob's declined call: %s", routertest.Text(res))
	}
	declined := bob.seen()
	if len(declined) == 0 {
		t.Fatal("bob was never asked")
	}
	for _, u := range declined {
		if u == aliceURL {
			t.Fatalf("bob was shown alice's authorization link")
		}
	}
	for _, c := range child.Calls() {
		if c.Who == "bob" {
			t.Fatalf("bob's call reached the child before he consented, with token %q", c.Token)
		}
	}

	// bob consents, on replica 1; his calls go with his own token.
	bob.answer = func(ctx context.Context, url string) string {
		if err := signIn(ctx, url); err != nil {
			t.Errorf("bob's sign-in at %s: %v", url, err)
			return "cancel"
		}
		return "accept"
	}
	for _, i := range []int{1, 2, 0} {
		if res := bob.record(bob.session(base(i))); res.IsError || routertest.Text(res) != "recorded bob" {
			t.Fatalf("bob's call on replica %d: %s", i, routertest.Text(res))
		}
	}
	if res := alice.record(alice.session(base(2))); res.IsError {
		t.Fatalf("alice's call after bob's login: %s", routertest.Text(res))
	}
	if got := alice.seen(); len(got) != 1 {
		t.Errorf("alice was asked again: %v", got)
	}
	for _, u := range bob.seen() {
		if u == aliceURL {
			t.Errorf("bob was shown alice's authorization link")
		}
	}

	tokens := map[string][]string{}
	for _, c := range child.Calls() {
		if !slices.Contains(tokens[c.Who], c.Token) {
			tokens[c.Who] = append(tokens[c.Who], c.Token)
		}
	}
	if len(tokens["alice"]) != 1 || len(tokens["bob"]) != 1 || tokens["alice"][0] == tokens["bob"][0] {
		t.Fatalf("tokens by caller: alice %d, bob %d, shared %v", len(tokens["alice"]), len(tokens["bob"]),
			len(tokens["alice"]) > 0 && len(tokens["bob"]) > 0 && tokens["alice"][0] == tokens["bob"][0])
	}
	for who, ts := range tokens {
		if strings.Contains(string(operatorToken), ts[0]) {
			t.Errorf("%s's call went with the router's own token", who)
		}
	}
	t.Logf("calls recorded: %d (alice on 3 replicas, bob on 3)", len(child.Calls()))
}

// operatorLogin signs the router's own authorization in through
// `evokore auth login remote`, the browser following the link.
func operatorLogin(t *testing.T, bin, home string, env []string, browser context.Context) {
	t.Helper()
	urlFile := filepath.Join(t.TempDir(), "url")
	login := exec.Command(bin, "auth", "login", "remote")
	login.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + home, "EVOKORE_HOME=" + home, "BROWSER=echo %s > " + urlFile}, env...)
	out := &routertest.Buffer{}
	login.Stdout, login.Stderr = out, out
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	authURL := openedURL(urlFile)
	if err := oauthtest.SignIn(browser)(context.Background(), authURL); err != nil {
		t.Fatalf("operator sign-in at %q: %v\n%s", authURL, err, out.String())
	}
	if err := login.Wait(); err != nil {
		t.Fatalf("auth login: %v\n%s", err, out.String())
	}
}

// waitTools waits until the session lists tool (the replica's template
// booted with the router's own authorization).
func waitTools(t *testing.T, cs *mcp.ClientSession, tool string) {
	t.Helper()
	routertest.WaitFor(t, fmt.Sprintf("%s listed", tool), func() bool { return slices.Contains(routertest.ToolNames(t, cs), tool) })
}
