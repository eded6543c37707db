package childauth

import (
	"context"
	"crypto/rand"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/evokore/evokore/internal/config"
)

// callbackPath is the loopback redirect's path.
const callbackPath = "/callback"

// login is one authorization waiting for a user: the SDK's authorization
// code flow (PKCE S256, the resource indicator, the registration the
// server supports) running on its own goroutine, and the loopback
// listener its redirect comes back to. It ends when the code is
// exchanged, or refused, or the user never comes (Options.LoginTimeout).
type login struct {
	id string
	// url is the authorization URL the user opens; state is its state
	// parameter, which a callback must carry. Set once, before urlReady
	// closes; mu guards them for the callback, which may come first.
	mu         sync.Mutex
	url, state string
	// results passes the callback's code to the flow.
	results chan *auth.AuthorizationResult
	done    chan struct{}
	err     error
}

// wait waits for the login to end; nil when a token is stored.
func (l *login) wait(ctx context.Context) error {
	select {
	case <-l.done:
		return l.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startLogin returns the child's login in progress, or starts one from
// the child's refusal ch. It returns once the authorization URL is known,
// or the flow failed before (discovery refused the server, registration
// failed).
func (m *Manager) startLogin(p principal, ch *challenge) (*login, error) {
	spec := p.spec
	m.mu.Lock()
	if l := m.logins[p.key()]; l != nil {
		select {
		case <-l.done:
		default:
			m.mu.Unlock()
			return l, nil
		}
	}
	m.mu.Unlock()

	resolved, err := spec.Resolve(m.opts.Env)
	if err != nil {
		return nil, err
	}
	client := m.httpClient(spec)
	ctx, cancel := context.WithTimeout(context.Background(), m.opts.LoginTimeout)
	found, err := discover(ctx, client, ch, resolved.URL)
	if err == nil && !found.pkce {
		err = errNoS256
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("the '%s' server cannot be authorized: %w", spec.ID, err)
	}
	port := 0
	if resolved.OAuth != nil {
		port = resolved.OAuth.CallbackPort
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("the '%s' server's login cannot listen for its redirect on port %d: %w", spec.ID, port, err)
	}
	redirect := fmt.Sprintf("http://localhost:%d%s", ln.Addr().(*net.TCPAddr).Port, callbackPath)
	l := &login{id: rand.Text(), results: make(chan *auth.AuthorizationResult, 1), done: make(chan struct{})}
	urlReady := make(chan struct{})
	var once sync.Once
	fetch := func(fctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		l.url, l.state = args.URL, u.Query().Get("state")
		l.mu.Unlock()
		once.Do(func() { close(urlReady) })
		select {
		case res := <-l.results:
			return res, nil
		case <-fctx.Done():
			return nil, fmt.Errorf("no one authorized the '%s' server within %s", spec.ID, m.opts.LoginTimeout)
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(m.flowConfig(p, resolved, found, redirect, client, fetch))
	if err != nil {
		ln.Close()
		cancel()
		return nil, err
	}
	srv := &http.Server{Handler: l.callback(spec.ID), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		defer cancel()
		req, err := ch.request()
		if err == nil {
			err = h.Authorize(ctx, req, ch.response())
		}
		if err != nil {
			err = fmt.Errorf("the '%s' server's authorization failed: %s", spec.ID, safeError(err))
		} else {
			m.setNeeds(p.key(), false)
			m.log.Info("[EVOKORE] A server is authorized", "server", spec.ID, "caller", p.owner != "")
		}
		l.err = err
		close(l.done)
		once.Do(func() { close(urlReady) })
		// The port is let go at once (a step-up may need it again); the
		// browser's request for the callback page is still answered.
		go func() {
			sctx, scancel := context.WithTimeout(context.Background(), 35*time.Second)
			defer scancel()
			_ = srv.Shutdown(sctx)
		}()
		m.notify(p.key())
	}()
	<-urlReady
	select {
	case <-l.done:
		if l.url == "" {
			return nil, l.err
		}
	default:
	}
	m.mu.Lock()
	m.logins[p.key()] = l
	m.mu.Unlock()
	return l, nil
}

// callback is the loopback redirect's page. A request without the
// login's state is refused without ending the login: another local
// program cannot end a user's login by calling the port first.
func (l *login) callback(id string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != callbackPath {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		l.mu.Lock()
		state := l.state
		l.mu.Unlock()
		if state == "" || q.Get("state") != state {
			http.Error(w, "This is not the authorization evokore is waiting for.", http.StatusBadRequest)
			return
		}
		res := &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
		if e := q.Get("error"); e != "" {
			res.Code = ""
		}
		select {
		case l.results <- res:
		default:
		}
		select {
		case <-l.done:
		case <-time.After(30 * time.Second):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		page := fmt.Sprintf("<!doctype html><title>evokore</title><p>evokore is authorized to the '%s' server. You can close this tab.</p>", html.EscapeString(id))
		if e := q.Get("error"); e != "" {
			page = fmt.Sprintf("<!doctype html><title>evokore</title><p>The '%s' server's authorization was refused: %s</p>", html.EscapeString(id), html.EscapeString(e))
		} else if l.err != nil {
			page = fmt.Sprintf("<!doctype html><title>evokore</title><p>%s</p>", html.EscapeString(l.err.Error()))
		}
		_, _ = w.Write([]byte(page))
	})
}

// flowConfig is the SDK flow's configuration: the registration methods
// in the specification's order (the SDK tries a Client ID Metadata
// Document first where the server supports one, then a configured
// client, then dynamic registration), refresh tokens asked for, the
// scopes settled by scopes, and every token kept in the store.
func (m *Manager) flowConfig(p principal, resolved config.Server, found *discovery, redirect string, client *http.Client, fetch auth.AuthorizationCodeFetcher) *auth.AuthorizationCodeHandlerConfig {
	o := resolved.OAuth
	if o == nil {
		o = &config.OAuth{}
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: fetch,
		RequestRefreshToken:      true,
		Client:                   client,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect},
			ClientName:   "evokore",
			GrantTypes:   []string{"authorization_code", "refresh_token"},
		}},
	}
	if o.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
	}
	if o.ClientID != "" {
		pre := &oauthex.ClientCredentials{ClientID: o.ClientID, Issuer: o.Issuer}
		if o.ClientSecret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
		}
		cfg.PreregisteredClient = pre
	}
	prior, _ := m.load(p)
	cfg.ScopeFilter = func(discovered []string) []string {
		want := discovered
		if len(o.Scopes) > 0 {
			want = o.Scopes
		}
		if prior != nil {
			// A step-up keeps what was granted before (SEP-2350).
			want = union(prior.Scopes, want)
		}
		return want
	}
	cfg.NewTokenSource = func(_ context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
		e := &Entry{URL: resolved.URL, Resource: found.resource, Issuer: found.issuer, AuthURL: oc.Endpoint.AuthURL,
			TokenURL: oc.Endpoint.TokenURL, RevocationURL: found.revocation, ClientID: oc.ClientID,
			AuthStyle: oc.Endpoint.AuthStyle, Scopes: oc.Scopes, Token: tok, Obtained: time.Now()}
		if granted := grantedScopes(tok); granted != nil {
			e.Scopes = granted
		}
		if o.ClientSecret == "" || oc.ClientID != o.ClientID {
			e.ClientSecret = oc.ClientSecret
		}
		if err := m.save(p, e); err != nil {
			return nil, fmt.Errorf("saving the token: %w", err)
		}
		src := m.source(p)
		src.reset()
		return src, nil
	}
	return cfg
}
