package childauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// ErrNeedsAuthorization is a child that needs a user to authorize
// evokore: no token, or one its server no longer accepts. A
// *NeedsAuthorizationError wraps it.
var ErrNeedsAuthorization = errors.New("needs authorization")

// NeedsAuthorizationError is a child that needs a user to authorize
// evokore. Its text names the command that does it; it never carries a
// token or an authorization URL (the model reads errors).
type NeedsAuthorizationError struct {
	Server string
	// Reason says why, when there is more to say than "no token".
	Reason string
	// Caller is set when the authorization needed is the caller's own
	// (an instance of a subject or session child): no command gives it,
	// only the caller, asked from a client that opens links.
	Caller bool
	// Exchange is set for a child reached with a token exchanged for
	// the caller's own (token exchange): no one signs in to it.
	Exchange bool
}

func (e *NeedsAuthorizationError) Error() string {
	msg := fmt.Sprintf("The '%s' server needs authorization: run `evokore auth login %s` in a terminal", e.Server, e.Server)
	switch {
	case e.Exchange:
		msg = fmt.Sprintf("The '%s' server takes a token exchanged for your own, and none could be had", e.Server)
	case e.Caller:
		msg = fmt.Sprintf("The '%s' server needs your own authorization: call it from a client that supports URL elicitation, which shows you the link to sign in", e.Server)
	}
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg
}

func (e *NeedsAuthorizationError) Unwrap() error { return ErrNeedsAuthorization }

// maxStepUps bounds the step-up authorizations (403 insufficient_scope)
// one connection asks for: a server that keeps asking for more is not
// asked again and again.
const maxStepUps = 2

// handler is the OAuth handler of a child whose tokens a user grants
// (the authorization code flow): auth.OAuthHandler for the child's
// transport.
type handler struct {
	m *Manager
	// p is the child as configured (placeholders unresolved), and whose
	// tokens the handler uses.
	p principal

	mu      sync.Mutex
	stepUps int
}

// TokenSource is the stored token's source, or nil when no token is
// stored: the request then goes without one, and the child's 401 calls
// Authorize.
func (h *handler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	src := h.m.source(h.p)
	if src.holds() {
		// Every request asks: the file is read only when the source
		// holds nothing (a login, a logout or a refused refresh reset it).
		return src, nil
	}
	e, err := h.m.load(h.p)
	if err != nil {
		return nil, h.p.needs(err.Error())
	}
	if !e.HasTokens() {
		return nil, nil
	}
	return src, nil
}

// Authorize answers a 401 or 403 from the child. A server that refused
// a token before its time (revoked) has it refreshed once; otherwise a
// user must authorize: the caller of the call, by URL elicitation, when
// the call's client takes one (or the terminal, for `evokore auth
// login`); else the request fails with a *NeedsAuthorizationError.
func (h *handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	stepUp := resp.StatusCode == http.StatusForbidden
	if stepUp && bearerParam(challenges, "error") != "insufficient_scope" {
		// Not a question of scope: the retry gets the same 403 and the
		// call fails with it.
		return nil
	}
	ch := &challenge{url: req.URL.String(), status: resp.StatusCode, header: resp.Header.Clone()}
	h.m.setChallenge(h.p.key(), ch)
	if stepUp {
		if err := h.boundStepUp(challenges); err != nil {
			return err
		}
	} else if h.refreshedAfterRefusal(ctx, req, ch) {
		return nil
	}
	h.m.setNeeds(h.p.key(), true)
	return h.m.authorize(ctx, h.p, ch)
}

// boundStepUp refuses a step-up that cannot help: the scopes the server
// asks for are granted already, or it asked too often.
func (h *handler) boundStepUp(challenges []oauthex.Challenge) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	asked := strings.Fields(bearerParam(challenges, "scope"))
	id := h.p.spec.ID
	if e, _ := h.m.load(h.p); e.HasTokens() && len(asked) > 0 && !slices.ContainsFunc(asked, func(s string) bool { return !slices.Contains(e.Scopes, s) }) {
		return fmt.Errorf("the '%s' server refused a token that holds every scope it asks for (%s); evokore does not ask for it again", id, strings.Join(asked, " "))
	}
	h.stepUps++
	if h.stepUps > maxStepUps {
		return fmt.Errorf("the '%s' server asked for more scopes %d times; evokore stopped asking", id, maxStepUps)
	}
	return nil
}

// refreshedAfterRefusal refreshes, once, a token the server refused
// (401) although it had not expired: true when a new one was obtained.
// A server whose authorization server changed (its metadata names
// another issuer) is not refreshed at the old one: its tokens and
// registration are forgotten, and a new login registers with the new
// one (SEP-2352).
func (h *handler) refreshedAfterRefusal(ctx context.Context, req *http.Request, ch *challenge) bool {
	refused, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok || refused == "" {
		return false
	}
	e, err := h.m.load(h.p)
	if err != nil || !e.HasTokens() {
		return false
	}
	if found, err := discover(ctx, h.m.httpClient(h.p.spec), ch, req.URL.String()); err == nil && e.Issuer != "" && !sameIssuer(found.issuer, e.Issuer) {
		h.m.log.Info("[EVOKORE] A server moved to another authorization server; it needs authorization again", "server", h.p.spec.ID, "issuer", found.issuer)
		_ = h.m.remove(h.p)
		h.m.source(h.p).reset()
		return false
	}
	tok, err := h.m.source(h.p).token(refused)
	return err == nil && tok.AccessToken != refused
}

// bearerParam is a parameter of the Bearer challenge.
func bearerParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params[name] != "" {
			return c.Params[name]
		}
	}
	return ""
}

// challenge is a child's 401 or 403: the request URL and the response's
// status and headers, all a login needs to begin.
type challenge struct {
	url    string
	status int
	header http.Header
}

func (m *Manager) setChallenge(key string, ch *challenge) {
	m.mu.Lock()
	m.challenges[key] = ch
	m.mu.Unlock()
}

// request and response rebuild the child's answer for the SDK's flow,
// which reads the URL and the WWW-Authenticate header.
func (c *challenge) request() (*http.Request, error) {
	u, err := url.Parse(c.url)
	if err != nil {
		return nil, err
	}
	return &http.Request{Method: http.MethodPost, URL: u, Header: http.Header{}}, nil
}

func (c *challenge) response() *http.Response {
	return &http.Response{StatusCode: c.status, Header: c.header.Clone(), Body: http.NoBody}
}
