package dashboard

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"
	"time"
)

const (
	maxBrowsers = 1024 // browser sessions kept; the oldest are dropped
	browserTTL  = 12 * time.Hour
	cookieName  = "evokore_dashboard"
	csrfHeader  = "X-CSRF-Token"
	csrfField   = "csrf_token"
)

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
