package dashboard

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Lockout, as EVOKORE-MCP's dashboard: 5 failed credentials from one
// address within 60 s lock that address out for 5 minutes (429).
const (
	lockoutFailures = 5
	lockoutWindow   = 60 * time.Second
	lockoutFor      = 5 * time.Minute
	maxTracked      = 4096 // addresses tracked; the oldest are dropped
	maxBrowsers     = 1024 // browser sessions kept; the oldest are dropped
	browserTTL      = 12 * time.Hour
	cookieName      = "evokore_dashboard"
	csrfHeader      = "X-CSRF-Token"
	csrfField       = "csrf_token"
)

// tokenEqual compares a presented token with the configured one in
// constant time: both are hashed first, so neither the content nor the
// length of the secret leaks through timing.
func tokenEqual(presented, want string) bool {
	a, b := sha256.Sum256([]byte(presented)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1 && want != ""
}

type failures struct {
	times  []time.Time
	locked time.Time
}

// lockout counts credential failures per client address.
type lockout struct {
	mu    sync.Mutex
	now   func() time.Time
	addrs map[string]*failures
}

func clientAddr(r *http.Request) string {
	// The remote address only: a header could name anyone.
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (l *lockout) locked(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.addrs[addr]
	return f != nil && l.now().Before(f.locked)
}

func (l *lockout) fail(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if l.addrs == nil {
		l.addrs = map[string]*failures{}
	}
	f := l.addrs[addr]
	if f == nil {
		if len(l.addrs) >= maxTracked {
			for k, v := range l.addrs {
				if !now.Before(v.locked) {
					delete(l.addrs, k)
					break
				}
			}
		}
		f = &failures{}
		l.addrs[addr] = f
	}
	keep := f.times[:0]
	for _, t := range f.times {
		if now.Sub(t) < lockoutWindow {
			keep = append(keep, t)
		}
	}
	f.times = append(keep, now)
	if len(f.times) >= lockoutFailures {
		f.locked = now.Add(lockoutFor)
		f.times = nil
	}
}

func (l *lockout) succeed(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f := l.addrs[addr]; f != nil && !l.now().Before(f.locked) {
		delete(l.addrs, addr)
	}
}

// browser is one browser's session: its CSRF token and, in token mode,
// whether it logged in.
type browser struct {
	csrf    string
	authed  bool
	expires time.Time
	created time.Time
}

type browsers struct {
	mu  sync.Mutex
	now func() time.Time
	m   map[string]*browser
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// get returns the browser session named by the request's cookie.
func (bs *browsers) get(r *http.Request) (string, *browser) {
	c, err := r.Cookie(cookieName)
	if err != nil || len(c.Value) != 64 {
		return "", nil
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.m[c.Value]
	if b == nil || !bs.now().Before(b.expires) {
		delete(bs.m, c.Value)
		return "", nil
	}
	cp := *b
	return c.Value, &cp
}

// start makes a new browser session, replacing old (login rotates the
// id so a session id planted before login is worthless after it).
func (bs *browsers) start(w http.ResponseWriter, r *http.Request, old string, authed bool) *browser {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.m == nil {
		bs.m = map[string]*browser{}
	}
	delete(bs.m, old)
	if len(bs.m) >= maxBrowsers {
		// Drop the oldest session not signed in, so anyone loading the
		// login page cannot sign out those who are; only when every
		// session is signed in does the oldest of those go.
		var oldest string
		var at time.Time
		var oldestAuthed bool
		for k, v := range bs.m {
			better := oldest == "" || (oldestAuthed && !v.authed) || (oldestAuthed == v.authed && v.created.Before(at))
			if better {
				oldest, at, oldestAuthed = k, v.created, v.authed
			}
		}
		delete(bs.m, oldest)
	}
	now := bs.now()
	id := randomToken()
	b := &browser{csrf: randomToken(), authed: authed, expires: now.Add(browserTTL), created: now}
	bs.m[id] = b
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: int(browserTTL / time.Second)})
	cp := *b
	return &cp
}

func (bs *browsers) end(id string) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	delete(bs.m, id)
}

// bearer returns the token of an Authorization: Bearer header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") {
		return strings.TrimSpace(h[7:]), true
	}
	return "", false
}
