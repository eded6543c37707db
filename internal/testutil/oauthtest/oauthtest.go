// Package oauthtest starts, for tests, a real OpenID provider (the
// zitadel/oidc library's example provider, with its login page and its
// in-memory storage) and a real MCP server behind it that checks every
// request's token at the provider's introspection endpoint (the go-sdk's
// auth.RequireBearerToken). Nothing here mocks OAuth: evokore meets a
// provider built from a maintained library, as it would meet GitHub's.
package oauthtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/client/rs"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Password signs User in at the provider's login page.
const Password = "verysecure"

// User is the login name of the provider's test user.
func User() string { return "test-user@localhost" }

// Provider is a running OpenID provider.
type Provider struct {
	// Issuer is its URL (http://localhost:<port>).
	Issuer string
	// ClientID and ClientSecret are a confidential client registered
	// with the redirect http://localhost:<CallbackPort>/callback.
	ClientID, ClientSecret string
	CallbackPort           int
	Storage                *storage.Storage
}

// NewProvider starts the provider on a free port.
func NewProvider(t testing.TB) *Provider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
	p := &Provider{Issuer: issuer, ClientID: "evokore-" + strings.ToLower(rand16()), ClientSecret: "s3cret-" + rand16(), CallbackPort: freePort(t)}
	storage.RegisterClients(storage.WebClient(p.ClientID, p.ClientSecret, fmt.Sprintf("http://localhost:%d/callback", p.CallbackPort)))
	p.Storage = storage.NewStorage(storage.NewUserStore(issuer))
	srv := &http.Server{Handler: exampleop.SetupServer(issuer, p.Storage, nil, false), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

// NewProviderWithoutS256 serves the discovery document of a provider
// that does not support PKCE S256 (no login page: evokore must refuse it
// before anyone signs in).
func NewProviderWithoutS256(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
	st := storage.NewStorage(storage.NewUserStore(issuer))
	key := [32]byte{1}
	provider, err := op.NewProvider(&op.Config{CryptoKey: key, CodeMethodS256: false, GrantTypeRefreshToken: true},
		st, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: provider, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return issuer
}

// Child is a running MCP server that wants the provider's tokens.
type Child struct {
	// URL is its MCP endpoint.
	URL string
	mu  sync.Mutex
	// seen are the tokens requests came with, in order, no repeats.
	seen []string
	// calls are the calls of the "record" tool, in order.
	calls []Call
}

// Call is one call of a child's "record" tool: who its argument named,
// the access token the request came with, and the subject its
// authorization server issued that token for.
type Call struct{ Who, Token, Subject string }

// ChildOptions shape a child.
type ChildOptions struct {
	// AuthorizationServer is what its protected resource metadata names;
	// the provider's issuer by default.
	AuthorizationServer string
	// Resource is the resource its metadata claims; its own URL by
	// default.
	Resource string
}

// Scopes a child asks for: openid and profile for everything, email
// for the tool "email" (a step-up).
var (
	BaseScopes = []string{"openid", "profile"}
	StepUp     = "email"
)

// NewChild starts an MCP server with three tools, "whoami" (the token's
// subject), "email" (which needs the StepUp scope) and "record" (which
// records who called with which token, see Calls), whose every request
// is checked at p's introspection endpoint.
func NewChild(t testing.TB, p *Provider, o ChildOptions) *Child {
	t.Helper()
	asURL := p.Issuer
	if o.AuthorizationServer != "" {
		asURL = o.AuthorizationServer
	}
	return newChild(t, asURL, o.Resource, func(ctx context.Context, token string) (*auth.TokenInfo, error) {
		r, err := rs.NewResourceServerClientCredentials(ctx, p.Issuer, p.ClientID, p.ClientSecret)
		if err != nil {
			return nil, err
		}
		resp, err := rs.Introspect[*oidc.IntrospectionResponse](ctx, r, token)
		if err != nil || !resp.Active {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Scopes: resp.Scope, Expiration: resp.Expiration.AsTime(), UserID: resp.Subject}, nil
	})
}

// newChild starts the child whose protected resource metadata names the
// authorization server asURL and the resource (its own URL when ""),
// and whose requests' tokens verify checks.
func newChild(t testing.TB, asURL, resource string, verify func(ctx context.Context, token string) (*auth.TokenInfo, error)) *Child {
	t.Helper()
	c := &Child{}
	server := mcp.NewServer(&mcp.Implementation{Name: "oauth-child", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "who the token is for"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "subject " + req.Extra.TokenInfo.UserID}}}, nil, nil
	})
	mcp.AddTool(server, &mcp.Tool{Name: StepUp, Description: "needs the email scope"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "scopes " + strings.Join(req.Extra.TokenInfo.Scopes, " ")}}}, nil, nil
	})
	mcp.AddTool(server, &mcp.Tool{Name: "record", Description: "records who called with which token"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		Who string `json:"who"`
	}) (*mcp.CallToolResult, any, error) {
		token, _ := req.Extra.TokenInfo.Extra["token"].(string)
		c.mu.Lock()
		c.calls = append(c.calls, Call{Who: in.Who, Token: token, Subject: req.Extra.TokenInfo.UserID})
		c.mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "recorded " + in.Who}}}, nil, nil
	})
	mux := http.NewServeMux()
	ts := httptest.NewUnstartedServer(mux)
	ts.Listener.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.Listener = ln
	base := fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
	c.URL = base + "/mcp"
	metaURL := base + "/.well-known/oauth-protected-resource/mcp"
	if resource == "" {
		resource = c.URL
	}
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: resource, AuthorizationServers: []string{asURL}, ScopesSupported: BaseScopes,
	}))
	verifier := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		info, err := verify(ctx, token)
		if err != nil {
			return nil, err
		}
		c.saw(token)
		info.Extra = map[string]any{"token": token}
		return info, nil
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux.Handle("/mcp", auth.RequireBearerToken(verifier, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metaURL, Scopes: BaseScopes[:1]})(stepUp(metaURL, handler)))
	ts.Start()
	t.Cleanup(ts.Close)
	return c
}

// stepUp answers a call of the StepUp tool whose token lacks its scope
// with 403 insufficient_scope, as a resource server that wants more
// does (MCP step-up authorization).
func stepUp(metaURL string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &msg)
			info := auth.TokenInfoFromContext(r.Context())
			if msg.Method == "tools/call" && msg.Params.Name == StepUp && info != nil && !slices.Contains(info.Scopes, StepUp) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s"`, StepUp, metaURL))
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (c *Child) saw(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.seen, token) {
		c.seen = append(c.seen, token)
	}
}

// Calls are the calls of the "record" tool, in order.
func (c *Child) Calls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// Tokens are the access tokens the child accepted, in order.
func (c *Child) Tokens() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen)
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func rand16() string { return rand.Text()[:16] }
