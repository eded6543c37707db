// Package dashboard is `evokore dashboard`: a small web application on
// loopback where an operator looks at what sessions did (the session
// list, a session's replay with a chart, the audit log) and approves or
// denies the calls routers hold for a human, live.
//
// It reads, never writes, the files other parts of evokore keep under
// EVOKORE_HOME (sessions/, audit/), and the HTTP sessions of a session
// store. Approvals come from two places: the approval files of routers
// under the same EVOKORE_HOME (watched with fsnotify), and the
// /ws/approvals feed of routers elsewhere (package approvalfeed). A
// decision goes back where the approval came from: policy.Decide for a
// local router, the feed for a remote one. Approvals are named by their
// full id everywhere, so Deny works from the page (EVOKORE-MCP's page
// knew only an 8-character prefix and its Deny always failed).
//
// Security: every request passes the guard every HTTP surface of evokore
// shares (package httpguard: the path decoded and cleaned once, Host,
// Origin, bearer token, lockout, security headers, deadlines), and the
// routes match the path the guard judged. Every page is rendered by html/template
// (every value is escaped in its context), the script and style are
// files embedded in the binary (no CDN, no build step, no inline script;
// the CSP forbids it). With EVOKORE_DASHBOARD_TOKEN set, requests need
// the token (a bearer header, or a login that sets an HttpOnly
// SameSite=Strict cookie); five wrong tokens from one address in 60 s
// lock it out for 5 minutes. Roles readonly < developer < admin gate each
// route. Every state-changing request made with a cookie must carry the
// session's CSRF token and, if the browser sent an Origin, the
// dashboard's own.
//
// Deciding an approval takes more than a role: the caller must hold the
// operator key (package operatorkey), a file under EVOKORE_HOME that a
// client confining its agent's shell keeps that shell from reading. A
// browser proves it once, signing in with the key or with a one-time code
// the dashboard printed where it was started (SignInCode); an API caller
// sends it with every decision (the Evokore-Operator-Key header). Without
// it, the role decides what a caller sees and nothing more: a same-user
// process that can reach the dashboard, and read the token if there is
// one, still cannot approve.
//
// Tenancy (httpguard's rule): the dashboard's credentials are static, so
// its callers are of the tenant "" (stdio sessions, hooks, routers
// without tenant scoping). Sessions, replays, approvals and audit records
// of a tenant-scoped HTTP session are not theirs to see or decide; a
// remote router's feed scopes what it sends by the feed token's tenant.
package dashboard

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evokore/evokore/internal/approvalfeed"
	"github.com/evokore/evokore/internal/auth"
	"github.com/evokore/evokore/internal/httpguard"
	"github.com/evokore/evokore/internal/operatorkey"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/sessionstore"
)

//go:embed assets templates
var files embed.FS

// maxStreams bounds the live approval streams open at once.
const maxStreams = 64

// Options configure a dashboard.
type Options struct {
	// Home is the EVOKORE_HOME it reads.
	Home string
	// Token, when set, is required of every request but the login page
	// and the auth status.
	Token string
	// Role is every authenticated caller's role; "" means admin without
	// a token (a local, single-user dashboard) and readonly with one.
	Role string
	// Store lists HTTP sessions; nil reads the file session store under
	// Home (session-store/<id>.json).
	Store sessionstore.Store
	// SessionTTL is the HTTP sessions' idle lifetime, for their status
	// (0: never expired).
	SessionTTL time.Duration
	// Approvals lists and decides the approvals of the routers this
	// dashboard reaches directly; nil means the files under Home.
	Approvals ApprovalStore
	// OnDecision, when set, is told of every verdict an operator gave
	// here that was recorded (the audit log).
	OnDecision func(id, verdict string)
	// Feeds are /ws/approvals URLs of routers whose EVOKORE_HOME is
	// elsewhere; FeedToken is sent to them as a bearer token.
	Feeds     []string
	FeedToken string
	// AllowedHosts are Host headers served beyond loopback names ("*":
	// any); none serves loopback names only, so a web page cannot reach
	// the dashboard through DNS rebinding.
	AllowedHosts []string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Dashboard is the application; Handler serves it.
type Dashboard struct {
	opts     Options
	role     string
	hub      *hub
	lock     httpguard.Lockout
	keyLock  httpguard.Lockout // wrong operator keys and codes: a valid token must not clear them
	token    *auth.Static      // nil without a token
	key      operatorkey.Key
	codes    codes
	browsers browsers
	guard    *httpguard.Guard
	pages    map[string]*template.Template
	mux      *http.ServeMux
	streams  atomic.Int64 // live approval streams open
	done     context.Context
	cancel   context.CancelFunc
	started  sync.Once
}

// New builds a dashboard. It starts nothing and dials nothing: Start
// watches the approvals and connects the feeds; Close stops them. It
// reads the operator key under Home (making one when there is none); a
// key it cannot read is an error, as the dashboard could let no one
// decide.
func New(opts Options) (*Dashboard, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	role := opts.Role
	if approvalfeed.RoleRank(role) == 0 {
		role = approvalfeed.RoleAdmin
		if opts.Token != "" {
			role = approvalfeed.RoleReadonly
		}
	}
	key, err := operatorkey.Load(opts.Home)
	if err != nil {
		return nil, err
	}
	var feedKey string
	if len(opts.Feeds) > 0 {
		if feedKey, err = operatorkey.Read(opts.Home); err != nil {
			return nil, err
		}
	}
	d := &Dashboard{opts: opts, role: role, key: key, hub: newHub(opts.Home, opts.Approvals, opts.Now)}
	d.lock.Now, d.keyLock.Now, d.browsers.now, d.codes.now = opts.Now, opts.Now, opts.Now, opts.Now
	g := httpguard.Options{Hosts: opts.AllowedHosts, Lockout: &d.lock, CSP: csp, Optional: true,
		Identify:     func(auth.Principal) httpguard.Caller { return httpguard.Caller{Role: role} },
		Unauthorized: func(w http.ResponseWriter, _ *http.Request, _ error) { unauthorized(w) }}
	if opts.Token != "" {
		d.token = auth.NewStatic([]string{opts.Token})
		g.Auth = d.token
	}
	d.guard = httpguard.New(g)
	for _, u := range opts.Feeds {
		d.hub.addFeed(u, opts.FeedToken, feedKey)
	}
	if err := d.parse(); err != nil {
		return nil, err
	}
	d.done, d.cancel = context.WithCancel(context.Background())
	d.routes()
	return d, nil
}

// Start watches the local approvals and connects the feeds, until Close.
// It does so once; a Start after Close starts nothing.
func (d *Dashboard) Start() error {
	err := d.done.Err()
	d.started.Do(func() {
		if err == nil {
			err = d.hub.run(d.done)
		}
	})
	return err
}

// Close stops watching approvals, disconnects the feeds and ends the
// live streams (so a server shutting down is not held by them).
func (d *Dashboard) Close() { d.cancel() }

// Role is the role callers get.
func (d *Dashboard) Role() string { return d.role }

// Handler serves the dashboard.
func (d *Dashboard) Handler() http.Handler { return d.guard.Wrap(http.HandlerFunc(d.serve)) }

func (d *Dashboard) parse() error {
	funcs := template.FuncMap{
		"when": func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04:05Z")
		},
		"ms": func(ms int64) string {
			if ms <= 0 {
				return "—"
			}
			return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05Z")
		},
		"latency": func(v float64) string {
			if v < 0 {
				return ""
			}
			return strconv.FormatFloat(v, 'f', 0, 64) + " ms"
		},
		"pct": func(n, of int) string {
			if of <= 0 {
				return "0"
			}
			return strconv.Itoa(100 * n / of)
		},
		"json": func(v any) string {
			b, _ := json.Marshal(v)
			return string(b)
		},
		"can":       func(role, need string) bool { return approvalfeed.RoleRank(role) >= approvalfeed.RoleRank(need) },
		"sessionID": validSessionID,
	}
	d.pages = map[string]*template.Template{}
	for _, p := range []string{"sessions", "replay", "approvals", "audit", "login", "error"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/"+p+".html")
		if err != nil {
			return err
		}
		d.pages[p] = t
	}
	return nil
}

// csp lets the pages load their own script, style and images only.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// serve runs behind the guard.
func (d *Dashboard) serve(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// One bad request must not take the dashboard down.
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "Internal error"})
		}
	}()
	if !fetchAllowed(r) {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "Forbidden: a page on another site may only link here"})
		return
	}
	if strings.HasPrefix(r.URL.Path, "/static/") {
		w.Header().Set("Cache-Control", "no-cache")
		http.StripPrefix("/static/", http.FileServerFS(mustSub(files, "assets"))).ServeHTTP(w, r)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	d.mux.ServeHTTP(w, r)
}

// fetchAllowed refuses what a page on another site makes the browser
// load from the dashboard (an image, a frame, a script, a no-cors fetch):
// it needs no CORS to send them, only to read the answer, and a page load
// without a cookie starts a browser session, so such a page could push
// the operator's session out (local mode counts every session as signed
// in) and make Approve and Deny fail their CSRF check. A top-level
// navigation (a link followed) is let through, and a client that sends
// no fetch metadata (curl, an older browser) is judged as before.
func fetchAllowed(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return r.Header.Get("Sec-Fetch-Mode") == "navigate" && r.Header.Get("Sec-Fetch-Dest") == "document"
}

func mustSub(f fs.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return s
}

// caller is who a request comes from. Its tenant is always "": the
// dashboard's credentials are static (see the package doc).
type caller struct {
	role     string
	bearer   bool   // authenticated by the Authorization header: no CSRF possible
	browser  string // the browser session id, "" if none
	csrf     string
	operator bool // holds the operator key: may decide approvals (as its role allows)
}

type handler func(w http.ResponseWriter, r *http.Request, c caller)

// wantsHTML tells a page navigation from an API call, for the reply to a
// missing credential (a redirect or a 401).
func wantsHTML(r *http.Request) bool {
	return !strings.HasPrefix(r.URL.Path, "/api/") && strings.Contains(r.Header.Get("Accept"), "text/html")
}

// route registers pattern for callers of at least need ("" is public).
func (d *Dashboard) route(pattern, need string, h handler) {
	d.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		c, ok := d.authenticate(w, r, need != "")
		if !ok {
			return
		}
		if k := r.Header.Get(operatorkey.Header); k != "" {
			if d.keyLocked(w, r) {
				return
			}
			if !d.key.Match(k) {
				d.keyLock.Fail(r)
				writeJSON(w, http.StatusForbidden, map[string]string{"error": "Forbidden: wrong operator key"})
				return
			}
			c.operator = true
		}
		if need != "" && approvalfeed.RoleRank(c.role) < approvalfeed.RoleRank(need) {
			if wantsHTML(r) {
				d.render(w, r, http.StatusForbidden, "error", c, "Forbidden", "This page needs the "+need+" role; you have "+c.role+".")
				return
			}
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "Forbidden: requires " + need + " role"})
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !d.csrfOK(r, c) {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "CSRF check failed"})
			return
		}
		h(w, r, c)
	})
}

// authenticate finds the caller. With required set, a caller without a
// valid credential is answered (302 to /login or 401) and ok is false.
func (d *Dashboard) authenticate(w http.ResponseWriter, r *http.Request, required bool) (caller, bool) {
	if who, ok := httpguard.CallerFrom(r.Context()); ok && d.token != nil {
		// The guard checked the bearer token.
		return caller{role: who.Role, bearer: true}, true
	}
	id, b := d.browsers.get(r)
	if d.opts.Token == "" {
		// Local mode: every caller has the role; a browser session is
		// kept only for its CSRF token, started on the first page (not
		// by API calls, which have no use for one).
		if b == nil && r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
			b = d.browsers.start(w, r, "", true, false)
			id = "" // the new id is in the cookie being set
			return caller{role: d.role, browser: "new", csrf: b.csrf}, true
		}
		c := caller{role: d.role, browser: id}
		if b != nil {
			c.csrf, c.operator = b.csrf, b.operator
		}
		return c, true
	}
	if b != nil && b.authed {
		return caller{role: d.role, browser: id, csrf: b.csrf, operator: b.operator}, true
	}
	if !required {
		c := caller{browser: id}
		if b != nil {
			c.csrf = b.csrf
		}
		return c, true
	}
	if wantsHTML(r) && r.Method == http.MethodGet {
		http.Redirect(w, r, "/login", http.StatusFound)
		return caller{}, false
	}
	unauthorized(w)
	return caller{}, false
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="evokore dashboard"`)
	writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "Unauthorized"})
}

// csrfOK checks a state-changing request: a bearer caller cannot be
// forged by a browser; a cookie caller must echo its session's CSRF token
// (header or form field) and, if the browser sent an Origin, come from
// the dashboard's own.
func (d *Dashboard) csrfOK(r *http.Request, c caller) bool {
	if c.bearer {
		return true
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return false
		}
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	got := r.Header.Get(csrfHeader)
	if got == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		got = r.PostFormValue(csrfField)
	}
	return c.csrf != "" && c.browser != "" && c.browser != "new" && subtle.ConstantTimeCompare([]byte(got), []byte(c.csrf)) == 1
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// page is what every template gets.
type page struct {
	Title    string
	Role     string
	CSRF     string
	Token    bool // token mode: show the logout button
	Operator bool // the caller holds the operator key: show Approve and Deny
	Nav      string
	Message  string
	Data     any
}

func (d *Dashboard) render(w http.ResponseWriter, _ *http.Request, status int, name string, c caller, title string, data any) {
	p := page{Title: title, Role: c.role, CSRF: c.csrf, Token: d.opts.Token != "", Operator: c.operator, Nav: name, Data: data}
	if s, ok := data.(string); ok {
		p.Message, p.Data = s, nil
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = d.pages[name].Execute(w, p)
}

func (d *Dashboard) routes() {
	d.mux = http.NewServeMux()
	const ro, dev, admin = approvalfeed.RoleReadonly, approvalfeed.RoleDeveloper, approvalfeed.RoleAdmin
	d.route("GET /login", "", d.loginPage)
	d.route("POST /login", "", d.login)
	d.route("POST /logout", ro, d.logout)
	d.route("GET /api/auth/status", "", d.authStatus)
	d.route("GET /{$}", ro, d.sessionsPage)
	d.route("GET /dashboard", ro, d.sessionsPage)
	d.route("GET /sessions/{id}", ro, d.replayPage)
	d.route("GET /approvals", dev, d.approvalsPage)
	d.route("GET /audit", admin, d.auditPage)
	d.route("GET /api/sessions", ro, d.apiSessions)
	d.route("GET /api/sessions/types", ro, d.apiSessionTypes)
	d.route("GET /api/sessions/{id}/replay", ro, d.apiReplay)
	d.route("GET /api/sessions/{id}/evidence", ro, d.apiEvidence)
	d.route("GET /api/approvals", dev, d.apiApprovals)
	d.route("GET /api/approvals/events", dev, d.apiApprovalEvents)
	d.route("POST /api/approvals/approve", approvalfeed.VerdictRole(policy.StateApproved), d.apiDecide(policy.StateApproved))
	d.route("POST /api/approvals/deny", approvalfeed.VerdictRole(policy.StateDenied), d.apiDecide(policy.StateDenied))
	d.route("GET /api/audit", admin, d.apiAudit)
	d.route("GET /api/audit/summary", admin, d.apiAuditSummary)
	d.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Not found"})
	})
}

// loginData is what the login page shows.
type loginData struct {
	Code     string // a one-time code from the link the dashboard printed
	KeyPath  string // where the operator key is
	NeedAuth bool   // token mode and not yet signed in: the token (or the key) is asked
	Error    string
}

// loginPage asks for the token (token mode, not yet signed in) or the
// operator key; a link with a one-time code shows a button that signs in
// with it. The code is spent by the POST, never by the GET: a browser
// that preloads a link it was shown must not spend it.
func (d *Dashboard) loginPage(w http.ResponseWriter, r *http.Request, c caller) {
	if c.operator {
		http.Redirect(w, r, "/", http.StatusFound)
		return
	}
	if c.csrf == "" {
		b := d.browsers.start(w, r, "", d.opts.Token == "", false)
		c.csrf = b.csrf
	}
	data := loginData{Code: r.URL.Query().Get("code"), KeyPath: operatorkey.Path(d.opts.Home), NeedAuth: d.opts.Token != "" && c.role == ""}
	if !validCode(data.Code) {
		data.Code = ""
	}
	d.render(w, r, http.StatusOK, "login", c, "Sign in", data)
}

// login signs a browser in: with a one-time code or the operator key as
// the operator (who may decide approvals), with the token (token mode)
// as a viewer of the token's role. Every wrong secret counts toward the
// lockout.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request, c caller) {
	r.Body = http.MaxBytesReader(w, r.Body, 10<<10)
	if !d.csrfOK(r, c) {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "CSRF check failed"})
		return
	}
	if d.keyLocked(w, r) {
		return
	}
	code, secret := r.PostFormValue("code"), r.PostFormValue("token")
	switch {
	case code != "" && d.codes.spend(code), secret != "" && d.key.Match(secret):
		d.lock.Succeed(r)
		d.browsers.start(w, r, c.browser, true, true)
	case d.token != nil && secret != "" && d.token.Match(secret):
		d.lock.Succeed(r)
		d.browsers.start(w, r, c.browser, true, false)
	default:
		d.lock.Fail(r)
		d.keyLock.Fail(r)
		msg := "Invalid token or operator key."
		if code != "" {
			msg = "That sign-in link was used already or has expired: sign in with the operator key."
		}
		d.render(w, r, http.StatusUnauthorized, "login", c, "Sign in",
			loginData{KeyPath: operatorkey.Path(d.opts.Home), NeedAuth: d.opts.Token != "" && c.role == "", Error: msg})
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// keyLocked answers 429 when r's address guessed the operator key (or a
// code) wrong too often. Those failures are counted apart from the
// token's: a caller holding the token, whose every request clears its
// token failures, must not guess the key without bound.
func (d *Dashboard) keyLocked(w http.ResponseWriter, r *http.Request) bool {
	if !d.keyLock.Locked(r) {
		return false
	}
	w.Header().Set("Retry-After", strconv.Itoa(int(d.keyLock.For()/time.Second)))
	writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "Too many failed attempts; try again later"})
	return true
}

// SignInCode is a new one-time code that signs a browser in as the
// operator (GET /login?code=…, then its button), for the command to print
// where the operator started the dashboard. It works once, within
// codeTTL.
func (d *Dashboard) SignInCode() string { return d.codes.issue() }

func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request, c caller) {
	d.browsers.end(c.browser)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func (d *Dashboard) authStatus(w http.ResponseWriter, _ *http.Request, c caller) {
	mode := "local"
	if d.opts.Token != "" {
		mode = "token"
	}
	var role any
	if c.role != "" {
		role = c.role
	}
	writeJSON(w, http.StatusOK, map[string]any{"authenticated": c.role != "", "mode": mode, "role": role})
}

// sessionQuery reads the list's filters; a bad since is an error.
func (d *Dashboard) sessionQuery(r *http.Request) ([]Session, url.Values, string) {
	q := r.URL.Query()
	since, ok := parseSince(q.Get("since"), d.opts.Now())
	if !ok {
		return nil, q, "Invalid since (use a duration such as 24h or 7d, RFC 3339, or Unix milliseconds)"
	}
	all := d.sessions(r.Context())
	return filterSessions(all, q.Get("type"), q.Get("status"), since), q, ""
}

func (d *Dashboard) apiSessions(w http.ResponseWriter, r *http.Request, _ caller) {
	list, _, bad := d.sessionQuery(r)
	if bad != "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": bad})
		return
	}
	writeJSON(w, http.StatusOK, list)
}

func (d *Dashboard) apiSessionTypes(w http.ResponseWriter, r *http.Request, _ caller) {
	counts := map[string]int{"hook": 0, "router": 0, "http": 0, "total": 0}
	for _, s := range d.sessions(r.Context()) {
		counts[s.Type]++
		counts["total"]++
	}
	writeJSON(w, http.StatusOK, counts)
}

func (d *Dashboard) sessionsPage(w http.ResponseWriter, r *http.Request, c caller) {
	list, q, bad := d.sessionQuery(r)
	data := struct {
		Sessions            []Session
		Type, Status, Since string
		Types, Statuses     []string
		SinceChoices        []string
		Error               string
	}{Sessions: list, Type: q.Get("type"), Status: q.Get("status"), Since: q.Get("since"),
		Types: []string{"hook", "router", "http"}, Statuses: []string{"active", "idle", "ended", "expired"},
		SinceChoices: []string{"1h", "24h", "7d", "30d"}, Error: bad}
	d.render(w, r, http.StatusOK, "sessions", c, "Sessions", data)
}

// sessionID reads and checks the {id} of a session route.
func sessionID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if !validSessionID(id) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "Invalid session id (letters, digits, '-' and '_' only)"})
		return "", false
	}
	return id, true
}

func (d *Dashboard) replayPage(w http.ResponseWriter, r *http.Request, c caller) {
	id, ok := sessionID(w, r)
	if !ok {
		return
	}
	if d.foreign(r.Context())[id] {
		// Another tenant's session reads as one with no records.
		d.render(w, r, http.StatusOK, "replay", c, "Session "+id, Replay{ID: id})
		return
	}
	d.render(w, r, http.StatusOK, "replay", c, "Session "+id, loadReplay(r.Context(), d.opts.Home, id))
}

func (d *Dashboard) apiReplay(w http.ResponseWriter, r *http.Request, _ caller) {
	if id, ok := sessionID(w, r); ok {
		writeJSON(w, http.StatusOK, d.sessionLines(r.Context(), id, replayPath(d.opts.Home, id)))
	}
}

func (d *Dashboard) apiEvidence(w http.ResponseWriter, r *http.Request, _ caller) {
	if id, ok := sessionID(w, r); ok {
		writeJSON(w, http.StatusOK, d.sessionLines(r.Context(), id, evidencePath(d.opts.Home, id)))
	}
}

func (d *Dashboard) approvalsPage(w http.ResponseWriter, r *http.Request, c caller) {
	d.render(w, r, http.StatusOK, "approvals", c, "Approvals", d.hub.current())
}

func (d *Dashboard) apiApprovals(w http.ResponseWriter, _ *http.Request, _ caller) {
	writeJSON(w, http.StatusOK, d.hub.current())
}

// apiApprovalEvents streams the approvals view as server-sent events: the
// current view at once, then every change.
func (d *Dashboard) apiApprovalEvents(w http.ResponseWriter, r *http.Request, _ caller) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "streaming unsupported"})
		return
	}
	if d.streams.Add(1) > maxStreams {
		d.streams.Add(-1)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "Too many live approval streams"})
		return
	}
	defer d.streams.Add(-1)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	ch, stop := d.hub.subscribe()
	defer stop()
	heartbeat := time.NewTicker(15 * time.Second)
	defer heartbeat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-d.done.Done():
			return
		case b := <-ch:
			if _, err := io.WriteString(w, "event: approvals\ndata: "+string(b)+"\n\n"); err != nil {
				return
			}
			fl.Flush()
		case <-heartbeat.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

func (d *Dashboard) apiDecide(verdict string) handler {
	return func(w http.ResponseWriter, r *http.Request, c caller) {
		if !c.operator {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "Forbidden: deciding an approval needs the operator key " +
				"(" + operatorkey.File + " in EVOKORE_HOME): sign in with it, or send it as " + operatorkey.Header})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 10<<10)
		var body struct {
			ID string `json:"id"`
		}
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			body.ID = r.PostFormValue("id")
		} else if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "Invalid JSON body"})
			return
		}
		if !approvalfeed.ValidID(body.ID) {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "Invalid approval id (must be exactly 16 hex characters)"})
			return
		}
		err := d.hub.decide(r.Context(), body.ID, verdict)
		switch {
		case errors.Is(err, errNoApproval):
			writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
		case err != nil:
			writeJSON(w, http.StatusConflict, map[string]string{"error": err.Error()})
		default:
			if d.opts.OnDecision != nil {
				d.opts.OnDecision(body.ID, verdict)
			}
			writeJSON(w, http.StatusOK, map[string]any{"ok": true, "id": body.ID, "state": verdict})
		}
	}
}

// auditQuery reads the audit filters and page.
func (d *Dashboard) auditQuery(r *http.Request) (auditFilter, int, int, string) {
	q := r.URL.Query()
	f := auditFilter{Event: q.Get("event"), Session: q.Get("session"), Tool: q.Get("tool")}
	since, ok := parseSince(q.Get("since"), d.opts.Now())
	if !ok {
		return f, 0, 0, "Invalid since"
	}
	f.Since = since
	limit, offset := 100, 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return f, 0, 0, "Invalid limit"
		}
		limit = min(max(n, 1), 1000)
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return f, 0, 0, "Invalid offset"
		}
		offset = n
	}
	return f, limit, offset, ""
}

func pageOf(all []AuditEntry, f auditFilter, limit, offset int) ([]AuditEntry, int) {
	var hit []AuditEntry
	for _, e := range all {
		if f.match(e) {
			hit = append(hit, e)
		}
	}
	total := len(hit)
	if offset >= len(hit) {
		return []AuditEntry{}, total
	}
	hit = hit[offset:]
	if len(hit) > limit {
		hit = hit[:limit]
	}
	return hit, total
}

func (d *Dashboard) apiAudit(w http.ResponseWriter, r *http.Request, _ caller) {
	f, limit, offset, bad := d.auditQuery(r)
	if bad != "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": bad})
		return
	}
	hit, total := pageOf(d.audit(r.Context()), f, limit, offset)
	entries := make([]map[string]any, 0, len(hit))
	for _, e := range hit {
		entries = append(entries, e.Raw)
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": entries, "total": total, "limit": limit, "offset": offset})
}

func (d *Dashboard) apiAuditSummary(w http.ResponseWriter, r *http.Request, _ caller) {
	all := d.audit(r.Context())
	counts := map[string]int{}
	for _, c := range summarize(all) {
		counts[c.Event] = c.Count
	}
	writeJSON(w, http.StatusOK, map[string]any{"total": len(all), "byEventType": counts})
}

func (d *Dashboard) auditPage(w http.ResponseWriter, r *http.Request, c caller) {
	f, limit, offset, bad := d.auditQuery(r)
	all := d.audit(r.Context())
	data := struct {
		Entries []AuditEntry
		Summary []EventCount
		Total   int
		Filter  auditFilter
		Since   string
		Error   string
		Events  []string
		Older   string // the query of the next page, "" on the last
		Newer   string // the query of the previous page, "" on the first
	}{Summary: summarize(all), Filter: f, Since: r.URL.Query().Get("since"), Error: bad}
	for _, s := range data.Summary {
		data.Events = append(data.Events, s.Event)
	}
	if bad == "" {
		data.Entries, data.Total = pageOf(all, f, limit, offset)
		page := func(off int) string {
			q := r.URL.Query()
			q.Set("offset", strconv.Itoa(off))
			q.Set("limit", strconv.Itoa(limit))
			return "?" + q.Encode()
		}
		if offset+len(data.Entries) < data.Total {
			data.Older = page(offset + limit)
		}
		if offset > 0 {
			data.Newer = page(max(offset-limit, 0))
		}
	}
	d.render(w, r, http.StatusOK, "audit", c, "Audit log", data)
}

// operator is every dashboard caller as the tenancy rule sees it: of the
// tenant "" (see the package doc).
var operator = httpguard.Caller{}

// foreign names the sessions of other tenants: those the session store
// holds under a tenant the operator does not own.
func (d *Dashboard) foreign(ctx context.Context) map[string]bool {
	var recs []sessionstore.Record
	if d.opts.Store != nil {
		recs, _ = d.opts.Store.List(ctx)
	} else {
		recs = storedSessions(ctx, d.opts.Home)
	}
	out := map[string]bool{}
	for _, r := range recs {
		if !operator.Owns(r.Tenant) {
			out[r.ID] = true
		}
	}
	return out
}

// sessions are the sessions the operator may see.
func (d *Dashboard) sessions(ctx context.Context) []Session {
	all := listSessions(ctx, d.opts.Home, d.opts.Store, d.opts.SessionTTL, d.opts.Now())
	foreign := d.foreign(ctx)
	out := all[:0]
	for _, s := range all {
		if !foreign[s.ID] {
			out = append(out, s)
		}
	}
	return out
}

// sessionLines reads a session's record file, none for another tenant's
// session (it reads as one with no records).
func (d *Dashboard) sessionLines(ctx context.Context, id, path string) []map[string]any {
	if d.foreign(ctx)[id] {
		return []map[string]any{}
	}
	return readLines(ctx, path)
}

// audit is the audit log without the records of other tenants' sessions:
// those a line names the tenant of, and those the session store knows
// (lines written before events carried the tenant).
func (d *Dashboard) audit(ctx context.Context) []AuditEntry {
	all := readAudit(ctx, d.opts.Home)
	foreign := d.foreign(ctx)
	out := all[:0]
	for _, e := range all {
		if operator.Owns(e.Tenant) && !foreign[e.Session] {
			out = append(out, e)
		}
	}
	return out
}
