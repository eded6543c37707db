package childauth

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/filewatch"
)

// Options configure a Manager.
type Options struct {
	// Home is EVOKORE_HOME: the tokens live under Home/oauth.
	Home string
	// Env resolves the ${VAR} placeholders of a child's url and secrets.
	Env config.Env
	// Log receives what happens to a child's authorization, never a
	// token; nil discards it.
	Log *slog.Logger
	// Open shows an authorization URL to the user and returns once it
	// is shown (`evokore auth login` opens the browser). Nil for a
	// router serving: it asks the caller of a call instead.
	Open func(ctx context.Context, url string) error
	// LoginTimeout bounds how long a login waits for the user; zero is
	// ten minutes.
	LoginTimeout time.Duration
}

// Manager owns the authorization of a router's HTTP children: their
// token files, the logins waiting for a user, and who waits for a
// child's authorization to change. Its methods are safe for concurrent
// use.
type Manager struct {
	opts  Options
	log   *slog.Logger
	store *Store

	// subjects keeps the tokens of callers (owners other than the
	// router): files, or Redis once the router shares its state.
	subjects subjectStores

	// The tables below are keyed by principal.key: a child's id for the
	// router's own authorization, the id and owner for a caller's.
	mu      sync.Mutex
	changed map[string]chan struct{}
	// needs marks the children whose last request found no usable
	// token.
	needs map[string]bool
	// challenges are the last 401 or 403 of each child: where a login
	// started by a call (the child never booted) begins.
	challenges map[string]*challenge
	// logins are the logins waiting for a user, by child.
	logins map[string]*login
	// sources are the token sources handed to transports, by child, so
	// a login or a logout is seen by the connection in use.
	sources map[string]*storedSource
	// exchanged are the tokens of token exchange children, by
	// principal: memory only (exchange.go).
	exchanged map[string]*exchanged
}

// New prepares a manager; nothing starts until Watch.
func New(opts Options) *Manager {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.LoginTimeout == 0 {
		opts.LoginTimeout = 10 * time.Minute
	}
	m := &Manager{opts: opts, log: log, store: NewStore(opts.Home),
		changed: map[string]chan struct{}{}, needs: map[string]bool{}, challenges: map[string]*challenge{},
		logins: map[string]*login{}, sources: map[string]*storedSource{}, exchanged: map[string]*exchanged{}}
	m.subjects.cur = ownerFiles{m.store}
	return m
}

// Store is the token store.
func (m *Manager) Store() *Store { return m.store }

// Applies reports whether evokore authorizes itself to the child: an
// HTTP child that does not send its own Authorization header.
func Applies(spec config.Server) bool {
	if !spec.IsHTTP() {
		return false
	}
	for k := range spec.Headers {
		if strings.EqualFold(k, "Authorization") {
			return false
		}
	}
	return true
}

// Handler is the OAuth handler for a transport to the child (as
// configured) on behalf of owner, nil when evokore does not authorize
// itself to it. A client credentials child has no user: every owner
// gets the child's own tokens.
func (m *Manager) Handler(spec config.Server, owner Owner) auth.OAuthHandler {
	if !Applies(spec) {
		return nil
	}
	if spec.OAuth != nil && spec.OAuth.Grant == config.GrantClientCredentials {
		return m.clientCredentials(spec)
	}
	if exchanges(spec) {
		if owner == "" {
			// The template lists the tools as the client itself; a
			// caller without a token of its own is refused before its
			// call gets here (CallerRefusal).
			return m.clientCredentials(spec)
		}
		return &exchangeHandler{m: m, p: principal{spec: spec, owner: owner}}
	}
	return &handler{m: m, p: principal{spec: spec, owner: owner}}
}

// Changed is closed when owner's authorization to the child changes: a
// login completed (here or in another process), or a logout.
func (m *Manager) Changed(id string, owner Owner) <-chan struct{} {
	key := keyOf(id, owner)
	m.mu.Lock()
	defer m.mu.Unlock()
	ch, ok := m.changed[key]
	if !ok {
		ch = make(chan struct{})
		m.changed[key] = ch
	}
	return ch
}

// notify tells whoever waits on Changed for key, and lets the
// connection's token source read the store again.
func (m *Manager) notify(key string) {
	m.mu.Lock()
	if ch, ok := m.changed[key]; ok {
		close(ch)
		delete(m.changed, key)
	}
	src := m.sources[key]
	m.mu.Unlock()
	if src != nil {
		src.reset()
	}
}

// NeedsAuthorization reports whether owner's last request to the child
// found no usable token: a user must authorize evokore again.
func (m *Manager) NeedsAuthorization(id string, owner Owner) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.needs[keyOf(id, owner)]
}

func (m *Manager) setNeeds(key string, needs bool) {
	m.mu.Lock()
	m.needs[key] = needs
	m.mu.Unlock()
}

// source is the one token source of the principal in this process.
func (m *Manager) source(p principal) *storedSource {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sources[p.key()]
	if !ok || s.p.spec.Identity() != p.spec.Identity() {
		s = &storedSource{m: m, p: p}
		m.sources[p.key()] = s
	}
	return s
}

// Watch re-reads the token store when a file in it changes (a login or
// logout by `evokore auth` in another process) and tells the children
// concerned, until ctx ends.
func (m *Manager) Watch(ctx context.Context, servers func() []config.Server) {
	known := map[string][32]byte{}
	snapshot := func() {
		for _, spec := range servers() {
			if !Applies(spec) {
				continue
			}
			var state [32]byte
			if e, err := m.store.Load(spec); err == nil && e.HasTokens() {
				state = sha256.Sum256([]byte(e.Token.AccessToken + "\x00" + e.Token.RefreshToken))
			}
			if old, seen := known[spec.ID]; seen && old != state {
				if state != ([32]byte{}) {
					m.setNeeds(spec.ID, false)
				}
				m.notify(spec.ID)
			}
			known[spec.ID] = state
		}
	}
	// The directory is watched, so it must exist before a first login.
	if err := os.MkdirAll(m.store.Dir(), 0o700); err != nil {
		m.log.Info("[EVOKORE] Cannot watch the token store; a login is seen after a restart", "err", err)
	}
	files := func() []string {
		var out []string
		for _, spec := range servers() {
			if Applies(spec) {
				out = append(out, m.store.path(spec))
			}
		}
		return out
	}
	filewatch.Watch(ctx, files, snapshot, m.log)
}

// httpClient is the client of a child's authorization requests
// (metadata, registration, tokens). The SDK refuses to fetch metadata
// from private addresses, against a server that points evokore at an
// internal service; a child that itself lives at a private address has
// its authorization server there too, so for it the dial is evokore's
// own, which the SDK leaves alone.
func (m *Manager) httpClient(spec config.Server) *http.Client {
	c := &http.Client{Timeout: 30 * time.Second}
	if privateHost(spec.URL) {
		c.Transport = &http.Transport{Proxy: http.ProxyFromEnvironment,
			DialContext: (&net.Dialer{Timeout: 30 * time.Second}).DialContext}
	}
	return c
}

// privateHost reports whether rawURL names a private or link-local IP
// address (not loopback: the SDK allows that already).
func privateHost(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return false
	}
	return ip.IsPrivate() || ip.IsLinkLocalUnicast()
}
