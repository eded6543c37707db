package childauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/evokore/evokore/internal/config"
)

// Login authorizes evokore to the child the way a router's connection
// would meet its server: it connects and lists the tools, and the
// server's 401 starts the flow (the user is shown the URL by
// Options.Open). It returns the stored entry; a child that was
// authorized already is only checked.
func (m *Manager) Login(ctx context.Context, spec config.Server, version string) (*Entry, error) {
	if !Applies(spec) {
		return nil, fmt.Errorf("'%s' is not an HTTP server evokore authorizes itself to (a stdio server, or one that sends its own Authorization header)", spec.ID)
	}
	if spec.OAuth != nil && spec.OAuth.Grant == config.GrantClientCredentials {
		return nil, fmt.Errorf("'%s' uses the client credentials grant: evokore gets its tokens itself, no one logs in", spec.ID)
	}
	if err := m.Check(ctx, spec, version); err != nil {
		if e, _ := m.store.Load(spec); e.HasTokens() {
			// Authorized, and the server still refuses something (a
			// scope it will not grant): the login itself succeeded.
			return e, fmt.Errorf("authorized, but the server still refuses: %w", err)
		}
		return nil, err
	}
	e, err := m.store.Load(spec)
	if err != nil {
		return nil, err
	}
	if !e.HasTokens() {
		return nil, fmt.Errorf("the '%s' server answered without asking for authorization: it needs none", spec.ID)
	}
	return e, nil
}

// Check connects to the child as the router does and lists its tools.
func (m *Manager) Check(ctx context.Context, spec config.Server, version string) error {
	resolved, err := spec.Resolve(m.opts.Env)
	if err != nil {
		return err
	}
	h := m.Handler(spec, "")
	var base http.RoundTripper = http.DefaultTransport
	if len(resolved.Headers) > 0 {
		base = Headers{Set: resolved.Headers, Base: base}
	}
	var t mcp.Transport
	if resolved.Transport == config.TransportSSE {
		rt := base
		if h != nil {
			rt = Transport(h, base)
		}
		t = &mcp.SSEClientTransport{Endpoint: resolved.URL, HTTPClient: &http.Client{Transport: rt}}
	} else {
		t = &mcp.StreamableClientTransport{Endpoint: resolved.URL, HTTPClient: &http.Client{Transport: base}, OAuthHandler: h}
	}
	protocol := cmpOr(spec.ProtocolVersion, "2025-11-25")
	client := mcp.NewClient(&mcp.Implementation{Name: "evokore-auth", Version: version}, nil)
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		return err
	}
	defer cs.Close()
	_, err = cs.ListTools(ctx, nil)
	return err
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Headers adds a child's configured headers to every request Base
// sends: the one place both the login flow and the proxy's HTTP carrier
// put them.
type Headers struct {
	Set  map[string]string
	Base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (h Headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.Set {
		r.Header.Set(k, v)
	}
	return h.Base.RoundTrip(r)
}

// Logout revokes the child's tokens where its authorization server has
// a revocation endpoint (RFC 7009), then forgets them. revoked says
// whether the server was told; a revocation that failed is reported and
// the tokens are forgotten all the same.
func (m *Manager) Logout(ctx context.Context, spec config.Server) (revoked bool, err error) {
	e, err := m.store.Load(spec)
	if err != nil && !errors.Is(err, ErrExposed) {
		return false, err
	}
	var revokeErr error
	if e.HasTokens() && e.RevocationURL != "" {
		resolved, rerr := spec.Resolve(m.opts.Env)
		if rerr != nil {
			resolved = spec
		}
		cfg := e.config(resolved)
		client := m.httpClient(spec)
		// The refresh token first: revoking it ends its access tokens
		// too on most servers (RFC 7009 §2.1).
		for _, t := range []struct{ token, hint string }{{e.Token.RefreshToken, "refresh_token"}, {e.Token.AccessToken, "access_token"}} {
			if t.token == "" {
				continue
			}
			if err := revoke(ctx, client, e.RevocationURL, cfg, t.token, t.hint); err != nil {
				revokeErr = err
				break
			}
		}
		revoked = revokeErr == nil
	}
	if err := m.store.Remove(spec); err != nil {
		return revoked, err
	}
	m.setNeeds(spec.ID, true)
	m.notify(spec.ID)
	if revokeErr != nil {
		return false, fmt.Errorf("forgot the tokens, but the server did not take their revocation: %w", revokeErr)
	}
	return revoked, nil
}

// revoke is an RFC 7009 revocation request, the client authenticated as
// at the token endpoint. (golang.org/x/oauth2 has no revocation.)
func revoke(ctx context.Context, client *http.Client, endpoint string, cfg *oauth2.Config, token, hint string) error {
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	basic := cfg.ClientSecret != "" && cfg.Endpoint.AuthStyle != oauth2.AuthStyleInParams
	if !basic {
		form.Set("client_id", cfg.ClientID)
		if cfg.ClientSecret != "" {
			form.Set("client_secret", cfg.ClientSecret)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(url.QueryEscape(cfg.ClientID), url.QueryEscape(cfg.ClientSecret))
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the revocation endpoint answered %s", resp.Status)
	}
	return nil
}

// State is what `evokore auth status` and doctor say of a child's
// authorization: never a token.
type State struct {
	Server string `json:"server"`
	// Status is "authorized", "needs authorization", "client
	// credentials" (no user: evokore gets its own tokens) or "error".
	Status      string     `json:"status"`
	Scopes      []string   `json:"scopes,omitempty"`
	Expires     *time.Time `json:"expires,omitempty"`
	Refreshable bool       `json:"refreshable,omitempty"`
	Issuer      string     `json:"issuer,omitempty"`
	Revocable   bool       `json:"revocable,omitempty"`
	Problem     string     `json:"problem,omitempty"`
}

// States of a child's authorization.
const (
	StateAuthorized         = "authorized"
	StateNeedsAuthorization = "needs authorization"
	StateClientCredentials  = "client credentials"
	StateError              = "error"
)

// StateOf is the child's authorization as stored.
func (m *Manager) StateOf(spec config.Server) State {
	st := State{Server: spec.ID}
	if spec.OAuth != nil && spec.OAuth.Grant == config.GrantClientCredentials {
		st.Status = StateClientCredentials
		return st
	}
	e, err := m.store.Load(spec)
	switch {
	case err != nil:
		st.Status, st.Problem = StateError, err.Error()
	case !e.HasTokens():
		st.Status = StateNeedsAuthorization
		if e != nil {
			st.Scopes = e.Scopes
		}
	default:
		st.Status, st.Scopes, st.Issuer = StateAuthorized, e.Scopes, e.Issuer
		st.Refreshable, st.Revocable = e.Token.RefreshToken != "", e.RevocationURL != ""
		if !e.Token.Expiry.IsZero() {
			t := e.Token.Expiry
			st.Expires = &t
		}
		if !st.Refreshable && st.Expires != nil && time.Now().After(*st.Expires) {
			st.Status = StateNeedsAuthorization
			st.Problem = "the access token expired and there is no refresh token"
		}
	}
	return st
}
