package childauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/session"
)

// Token exchange (RFC 8693): a child whose oauth.grant is
// "token_exchange" is reached, by each caller's instance, with a token
// its authorization server issued in exchange for the caller's own
// inbound bearer token (the one `serve --http` authenticated), asked for
// as the configured client. No one is asked to consent: the caller's
// sign-in is the consent. The exchanged token lives in this process's
// memory, under the caller's owner key, until it expires or the child
// refuses it; it is exchanged again then. The template (the router's own
// connection, which lists the child's tools) has no caller: it uses the
// client's own credentials (client_credentials).

// accessTokenType is RFC 8693's type of an OAuth access token, both the
// one given (the caller's) and the one asked for.
const accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

// exchanges reports whether the child trades its callers' tokens.
func exchanges(spec config.Server) bool {
	return spec.OAuth != nil && spec.OAuth.Grant == config.GrantTokenExchange
}

// CallerRefusal is why a call of sess cannot reach the child, "" when it
// can: a token exchange child needs a caller authenticated by a bearer
// token (not stdio, not HTTP without authentication), in an instance of
// its own.
func CallerRefusal(spec config.Server, sess *session.Session) string {
	if !exchanges(spec) || !Applies(spec) {
		return ""
	}
	if !spec.PerCaller() {
		return fmt.Sprintf("The '%s' server trades each caller's own token (oauth.grant \"token_exchange\"), which a shared child cannot: set its scope to \"subject\"", spec.ID)
	}
	if sess != nil && sess.Identity.Subject != "" && sess.Inbound() != "" {
		return ""
	}
	return fmt.Sprintf("The '%s' server is reached with a token exchanged for the caller's own (oauth.grant \"token_exchange\"), and this caller has none: call it over `evokore serve --http` with a bearer token that names you", spec.ID)
}

// exchanged is one owner's exchanged token, for the child as configured
// when it was had.
type exchanged struct {
	identity string
	token    *oauth2.Token
}

// fresh reports whether the token may still be sent: a token without an
// expiry is used until the child refuses it.
func (x *exchanged) fresh(spec config.Server, now time.Time) bool {
	return x != nil && x.identity == spec.Identity() && (x.token.Expiry.IsZero() || now.Add(10*time.Second).Before(x.token.Expiry))
}

// exchangeHandler is the OAuth handler of a caller's instance of a token
// exchange child.
type exchangeHandler struct {
	m *Manager
	p principal
}

// TokenSource is the owner's exchanged token. Without a fresh one the
// request goes without a token, and the child's 401 calls Authorize,
// which exchanges with the token of the call that made the request.
func (h *exchangeHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return exchangedSource(*h), nil
}

type exchangedSource exchangeHandler

func (s exchangedSource) Token() (*oauth2.Token, error) {
	s.m.mu.Lock()
	x := s.m.exchanged[s.p.key()]
	s.m.mu.Unlock()
	if x.fresh(s.p.spec, time.Now()) {
		return copyToken(x.token), nil
	}
	return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "no exchanged token"}
}

// Authorize answers the child's 401: the token it refused is forgotten
// and the call's caller's token exchanged again. A 403 is no question of
// a token: the retry gets it again and the call fails with it.
func (h *exchangeHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusForbidden {
		return nil
	}
	key := h.p.key()
	h.m.setChallenge(key, &challenge{url: req.URL.String(), status: resp.StatusCode, header: resp.Header.Clone()})
	refused, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	h.m.mu.Lock()
	if x := h.m.exchanged[key]; x != nil && x.token.AccessToken == refused {
		delete(h.m.exchanged, key)
	}
	h.m.mu.Unlock()
	return h.m.exchange(ctx, h.p)
}

// exchange trades the inbound token of ctx's caller, who must be p's
// owner, for a token of p's child, and keeps it for p. A failure is a
// *NeedsAuthorizationError that names the child and the authorization
// server's error code, never a token.
func (m *Manager) exchange(ctx context.Context, p principal) error {
	key := p.key()
	fail := func(reason string) error {
		m.setNeeds(key, true)
		return &NeedsAuthorizationError{Server: p.spec.ID, Reason: reason, Caller: true, Exchange: true}
	}
	sess, _ := ctx.Value(callerKey{}).(*session.Session)
	if sess == nil || callerOwner(ctx) != p.owner {
		// A boot, or another caller's call: only the owner's own call
		// carries the token to trade.
		return fail("")
	}
	subjectToken := sess.Inbound()
	if subjectToken == "" {
		return fail("the call carries no bearer token")
	}
	resolved, err := p.spec.Resolve(m.opts.Env)
	if err != nil {
		return fail(err.Error())
	}
	o := resolved.OAuth
	if o.ClientID == "" || o.ClientSecret == "" {
		return fail("token exchange needs oauth.clientId and oauth.clientSecret")
	}
	m.mu.Lock()
	ch := m.challenges[key]
	m.mu.Unlock()
	if ch == nil {
		ch = &challenge{url: resolved.URL, status: http.StatusUnauthorized, header: http.Header{}}
	}
	client := m.httpClient(p.spec)
	found, err := discover(ctx, client, ch, ch.url)
	if err != nil {
		return fail(err.Error())
	}
	if o.Issuer != "" && !sameIssuer(o.Issuer, found.issuer) {
		return fail(fmt.Sprintf("the authorization server %q is not the configured issuer %q", found.issuer, o.Issuer))
	}
	scopes := o.Scopes
	if len(scopes) == 0 {
		scopes = found.scopes
	}
	tok, err := oauthex.ExchangeToken(ctx, found.tokenURL, &oauthex.TokenExchangeRequest{
		RequestedTokenType: accessTokenType, Audience: found.resource, Resource: found.resource, Scope: scopes,
		SubjectToken: subjectToken, SubjectTokenType: accessTokenType,
	}, &oauthex.ClientCredentials{ClientID: o.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}}, client)
	if err != nil {
		m.log.Info("[EVOKORE] An authorization server refused to exchange a caller's token", "server", p.spec.ID, "issuer", found.issuer, "err", safeError(err))
		return fail(fmt.Sprintf("its authorization server %s refused to exchange the caller's token: %s", found.issuer, safeError(err)))
	}
	now := time.Now()
	m.mu.Lock()
	for k, x := range m.exchanged {
		// Expired ones go: a churn of callers leaves nothing behind.
		if !x.token.Expiry.IsZero() && now.After(x.token.Expiry) {
			delete(m.exchanged, k)
		}
	}
	m.exchanged[key] = &exchanged{identity: p.spec.Identity(), token: tok}
	m.mu.Unlock()
	m.setNeeds(key, false)
	return nil
}

// requiredExchange is Required for a token exchange child: the call's
// caller's token is exchanged, and the instance boots again with the
// result.
func (m *Manager) requiredExchange(ctx context.Context, p principal) error {
	if err := m.exchange(ctx, p); err != nil {
		return err
	}
	m.notify(p.key())
	return nil
}
