package childauth_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/childauth"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/testutil/oauthtest"
)

// remote is the child as a user configures it: the provider's client,
// its secret by ${VAR}, the port its redirect was registered with.
func remote(p *oauthtest.Provider, c *oauthtest.Child) (config.Server, config.Env) {
	spec := config.Server{ID: "remote", Transport: config.TransportHTTP, URL: c.URL, OAuth: &config.OAuth{
		ClientID: p.ClientID, ClientSecret: "${REMOTE_SECRET}", CallbackPort: p.CallbackPort,
	}}
	return spec, config.NewEnv(map[string]string{"REMOTE_SECRET": p.ClientSecret})
}

// connect is a router's connection to the child, authorized by m.
func connect(t *testing.T, m *childauth.Manager, spec config.Server) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "router", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: spec.URL, OAuthHandler: m.Handler(spec, "")},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func text(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// A user signs evokore in through a real browser at a real OpenID
// provider; the router's connection calls the child with the token,
// refreshes it once it expired, asks for the user again for a tool that
// needs more scope (step-up), and after logout the server revoked the
// tokens and the child needs authorization.
func TestLoginCallRefreshStepUpLogout(t *testing.T) {
	ctx := oauthtest.Browser(t)
	p := oauthtest.NewProvider(t)
	child := oauthtest.NewChild(t, p, oauthtest.ChildOptions{})
	spec, env := remote(p, child)
	home := t.TempDir()
	user := childauth.New(childauth.Options{Home: home, Env: env, Open: oauthtest.SignIn(ctx)})

	e, err := user.Login(context.Background(), spec, "test")
	if err != nil || !e.HasTokens() {
		t.Fatalf("login: %v", err)
	}
	first := e.Token.AccessToken
	if st := user.StateOf(spec); st.Status != childauth.StateAuthorized || !st.Refreshable {
		t.Fatalf("state after login: %+v", st)
	}
	files, _ := filepath.Glob(filepath.Join(home, "oauth", "*.json"))
	if len(files) != 1 {
		t.Fatalf("token files: %v", files)
	}
	for _, f := range append(files, filepath.Dir(files[0])) {
		fi, err := os.Stat(f)
		if err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Fatalf("%s is not owner-only: %v", f, fi.Mode())
		}
	}

	// A router (no user at hand) uses the stored token.
	router := childauth.New(childauth.Options{Home: home, Env: env})
	cs := connect(t, router, spec)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami"})
	if err != nil || !strings.HasPrefix(text(res), "subject ") {
		t.Fatalf("whoami: %v %+v", err, res)
	}

	// The token expires: the next router refreshes it before its call.
	expired, _ := router.Store().Load(spec)
	expired.Token.Expiry = time.Now().Add(-time.Minute)
	if err := router.Store().Save(spec, expired); err != nil {
		t.Fatal(err)
	}
	later := childauth.New(childauth.Options{Home: home, Env: env})
	res, err = connect(t, later, spec).CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami"})
	if err != nil || res.IsError {
		t.Fatalf("whoami after expiry: %v %+v", err, res)
	}
	refreshed, _ := later.Store().Load(spec)
	seen := child.Tokens()
	if refreshed.Token.AccessToken == first || seen[len(seen)-1] != refreshed.Token.AccessToken || !refreshed.Token.Expiry.After(time.Now()) {
		t.Fatalf("the expired token was not refreshed: the child saw %d tokens", len(seen))
	}

	// A tool that needs more scope: a router with no one to ask fails
	// the call naming the command; the user's session steps up.
	res, err = connect(t, later, spec).CallTool(context.Background(), &mcp.CallToolParams{Name: oauthtest.StepUp})
	if err == nil || !strings.Contains(err.Error(), "evokore auth login remote") {
		t.Fatalf("step-up without a user: %v %+v", err, res)
	}
	res, err = connect(t, user, spec).CallTool(context.Background(), &mcp.CallToolParams{Name: oauthtest.StepUp})
	if err != nil || !strings.Contains(text(res), oauthtest.StepUp) || !strings.Contains(text(res), "openid") {
		t.Fatalf("step-up: %v %q", err, text(res))
	}

	// Logout revokes at the provider and forgets.
	stale, _ := user.Store().Load(spec)
	revoked, err := user.Logout(context.Background(), spec)
	if err != nil || !revoked {
		t.Fatalf("logout: revoked=%v %v", revoked, err)
	}
	if st := user.StateOf(spec); st.Status != childauth.StateNeedsAuthorization {
		t.Fatalf("state after logout: %+v", st)
	}
	req, _ := http.NewRequest(http.MethodPost, child.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+stale.Token.AccessToken)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the revoked token still works at the child: %v %v", err, resp)
	}
	_, err = childauth.New(childauth.Options{Home: home, Env: env}).Login(context.Background(), spec, "test")
	if !errors.Is(err, childauth.ErrNeedsAuthorization) {
		t.Fatalf("after logout, a router without a user: %v", err)
	}
}

// Servers evokore must not authorize against are refused before any
// browser opens, and nothing is stored: a resource metadata document for
// another resource, an authorization server whose metadata names another
// issuer, and one without PKCE S256.
func TestRefusesMisconfiguredServers(t *testing.T) {
	p := oauthtest.NewProvider(t)
	port := p.Issuer[strings.LastIndex(p.Issuer, ":")+1:]
	for _, tc := range []struct {
		name string
		o    oauthtest.ChildOptions
		want string
	}{
		{"resource mismatch", oauthtest.ChildOptions{Resource: "http://localhost:1/other"}, "another resource"},
		{"wrong issuer", oauthtest.ChildOptions{AuthorizationServer: "http://" + net.JoinHostPort("127.0.0.1", port)}, "issuer"},
		{"no S256", oauthtest.ChildOptions{AuthorizationServer: oauthtest.NewProviderWithoutS256(t)}, "PKCE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			child := oauthtest.NewChild(t, p, tc.o)
			spec, env := remote(p, child)
			home := t.TempDir()
			opened := false
			m := childauth.New(childauth.Options{Home: home, Env: env, Open: func(context.Context, string) error {
				opened = true
				return errors.New("no browser in this test")
			}})
			_, err := m.Login(context.Background(), spec, "test")
			if err == nil || !strings.Contains(err.Error(), tc.want) || opened {
				t.Fatalf("login: opened=%v err=%v, want a refusal naming %q", opened, err, tc.want)
			}
			if files, _ := filepath.Glob(filepath.Join(home, "oauth", "*.json")); len(files) != 0 {
				t.Fatalf("stored %v", files)
			}
		})
	}
}
