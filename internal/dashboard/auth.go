package dashboard

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
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

// browser is one browser's session: its CSRF token, in token mode
// whether it logged in, and whether it signed in with the operator key.
type browser struct {
	csrf     string
	authed   bool
	operator bool
	expires  time.Time
	created  time.Time
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
func (bs *browsers) start(w http.ResponseWriter, r *http.Request, old string, authed, operator bool) *browser {
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
	b := &browser{csrf: randomToken(), authed: authed, operator: operator, expires: now.Add(browserTTL), created: now}
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

// codeTTL is how long a one-time sign-in code works.
const codeTTL = 10 * time.Minute

// maxCodes bounds the codes outstanding; the oldest go first.
const maxCodes = 16

// codes are one-time sign-in codes: each signs one browser in as the
// operator, once, within codeTTL. They live in the dashboard's memory
// only, so a code read from a terminal's scrollback or a browser's
// history after its use is worthless.
type codes struct {
	mu  sync.Mutex
	now func() time.Time
	m   map[string]time.Time // code → expiry
}

func (cs *codes) issue() string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m == nil {
		cs.m = map[string]time.Time{}
	}
	if len(cs.m) >= maxCodes {
		var oldest string
		for k, exp := range cs.m {
			if oldest == "" || exp.Before(cs.m[oldest]) {
				oldest = k
			}
		}
		delete(cs.m, oldest)
	}
	c := randomToken()
	cs.m[c] = cs.now().Add(codeTTL)
	return c
}

// spend reports whether code is outstanding and unexpired, and retires it
// either way.
func (cs *codes) spend(code string) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	exp, ok := cs.m[code]
	delete(cs.m, code)
	return ok && cs.now().Before(exp)
}

// validCode reports whether s has a code's shape (64 hex characters), so
// the login page shows no other text as one.
func validCode(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
