// Package httpguard is the one gate in front of every HTTP surface evokore
// serves: the MCP endpoint (`serve --http`), the approvals feed mounted
// beside it, and the dashboard. It checks, in this order and for every
// route:
//
//  1. Host: loopback names, plus Options.Hosts. A page on another site
//     that rebinds its name to this address still sends its own name.
//  2. Origin, when a browser sent one: loopback origins, the request's own
//     (already accepted) host, plus Options.Origins.
//  3. The lockout, when the surface keeps one: an address that guessed
//     wrong credentials too often is refused before it may guess again.
//  4. The bearer token, with Options.Auth: the principal it names becomes
//     the request's Caller (its role and tenant).
//
// and it sets the security headers on every response. Before any check,
// the request's path is decoded and cleaned once (Canonical): what a
// surface routes on, and any rule that matches paths, is the path served
// (a client writing /api/%61pprovals or //api/./approvals reaches, and is
// judged as, /api/approvals). NewServer and
// Listener (server.go, listener.go) bound the connections: timeouts that
// never cut a live stream, and caps that make idle connections give way
// to work, so no one client can turn the others (or /health) away. The zero Options are the
// safest: loopback names and origins only, no wildcard.
//
// # Tenancy
//
// The rule every HTTP surface follows, written here once: a caller sees
// and acts on sessions, approvals, memories, replays and audit records of
// its own tenant only (Caller.Owns); a static token has exactly the role
// its configuration gives it, never more. Without tenant scoping every
// caller is of the one tenant "", and so is every record.
package httpguard

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/auth"
)

// Caller is who a request acts for, as every surface behind the guard
// sees it.
type Caller struct {
	// Subject is the authenticated subject (a JWT's sub); "" for a static
	// token or without authentication.
	Subject string
	// Tenant is the tenant whose records the caller may see and act on.
	Tenant string
	// Role is the caller's role on the surfaces that gate by role (the
	// approvals feed, the dashboard): "" may do nothing a role gates.
	Role string
	// Claim is the role the credential itself names (a JWT's role claim),
	// "" when it names none: an MCP session then runs under the role the
	// configuration gives new sessions, resolved when it starts.
	Claim string
}

// Owns reports whether a record of tenant is the caller's to see and act
// on: the tenancy rule.
func (c Caller) Owns(tenant string) bool { return c.Tenant == tenant }

type callerKey struct{}

// CallerFrom returns the Caller the guard let through; ok is false when
// the guard named none (an anonymous request on a surface whose
// credentials are optional, or a handler not behind the guard).
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// DefaultCSP forbids everything: what a surface that serves no page
// sends.
const DefaultCSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"

// Options configure a Guard. The zero value accepts loopback only and
// checks no credential.
type Options struct {
	// Hosts are Host values accepted beyond loopback names, as "name" or
	// "name:port"; "*" accepts any.
	Hosts []string
	// Origins are Origin values accepted beyond loopback ones and the
	// request's own host, as "scheme://host[:port]"; "*" accepts any.
	Origins []string
	// Auth checks bearer tokens; nil checks none, and every request acts
	// as Identify(auth.Principal{}).
	Auth auth.Authenticator
	// Optional lets a request that carries no Authorization header through
	// with no Caller, for the surface to identify some other way (the
	// dashboard's login page and session cookie). A request that carries
	// one is checked all the same.
	Optional bool
	// Identify turns a principal into the Caller: its role (a static
	// token's from the configuration) and tenant. Nil gives the principal's
	// subject and role claim and the tenant "".
	Identify func(auth.Principal) Caller
	// Lockout, when set, refuses addresses that failed too often and
	// counts every credential failure.
	Lockout *Lockout
	// OnAuthFailure, when set, is told of every request refused for its
	// credentials (the audit log), with the reason, never the credential.
	OnAuthFailure func(r *http.Request, reason string)
	// Unauthorized writes the 401 in the surface's format; nil writes
	// {"error":"Unauthorized"} with a Bearer challenge.
	Unauthorized func(w http.ResponseWriter, r *http.Request, err error)
	// CSP is the Content-Security-Policy of every response; "" is
	// DefaultCSP.
	CSP string
}

// Guard checks every request before its handler.
type Guard struct{ o Options }

// New builds a guard.
func New(o Options) *Guard {
	if o.CSP == "" {
		o.CSP = DefaultCSP
	}
	if o.Identify == nil {
		o.Identify = func(p auth.Principal) Caller { return Caller{Subject: p.Subject, Role: p.Role, Claim: p.Role} }
	}
	return &Guard{o: o}
}

// Wrap puts the guard in front of next.
func (g *Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers(w.Header(), g.o.CSP)
		r, ok := g.check(w, Canonical(r))
		if ok {
			next.ServeHTTP(w, r)
		}
	})
}

// check runs the checks; on a refusal it has answered and ok is false.
func (g *Guard) check(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if !g.hostAllowed(r.Host) {
		WriteJSON(w, http.StatusForbidden, map[string]string{"error": "Forbidden: Host not allowed"})
		return r, false
	}
	if o := r.Header.Get("Origin"); o != "" && !g.originAllowed(o, r.Host) {
		WriteJSON(w, http.StatusForbidden, map[string]string{"error": "Forbidden: Origin not allowed"})
		return r, false
	}
	if g.o.Lockout != nil && g.o.Lockout.Locked(r) {
		w.Header().Set("Retry-After", strconv.Itoa(int(g.o.Lockout.For()/time.Second)))
		WriteJSON(w, http.StatusTooManyRequests, map[string]string{"error": "Too many failed attempts; try again later"})
		return r, false
	}
	if g.o.Auth == nil {
		return r.WithContext(WithCaller(r.Context(), g.o.Identify(auth.Principal{}))), true
	}
	if g.o.Optional && r.Header.Get("Authorization") == "" {
		return r, true
	}
	p, err := g.o.Auth.Authenticate(r)
	if err != nil {
		if g.o.Lockout != nil {
			g.o.Lockout.Fail(r)
		}
		if g.o.OnAuthFailure != nil {
			g.o.OnAuthFailure(r, err.Error())
		}
		if g.o.Unauthorized != nil {
			g.o.Unauthorized(w, r, err)
		} else {
			w.Header().Set("WWW-Authenticate", `Bearer realm="evokore"`)
			WriteJSON(w, http.StatusUnauthorized, map[string]string{"error": "Unauthorized"})
		}
		return r, false
	}
	if g.o.Lockout != nil {
		g.o.Lockout.Succeed(r)
	}
	return r.WithContext(WithCaller(r.Context(), g.o.Identify(p))), true
}

// Canonical returns r with its path decoded and cleaned: percent-escapes
// decoded (net/http has done so in URL.Path), then "//", "/./" and ".."
// resolved as path.Clean does, a trailing slash dropped. RawPath is
// cleared, so a router that matches escaped segments (http.ServeMux)
// sees the same path as a handler reading URL.Path. A path that is
// already canonical returns r itself.
func Canonical(r *http.Request) *http.Request {
	p := r.URL.Path
	c := p
	if c == "" {
		c = "/"
	}
	if strings.HasPrefix(c, "/") {
		c = path.Clean(c)
	}
	if c == p && r.URL.RawPath == "" {
		return r
	}
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path, u.RawPath = c, ""
	r2.URL = &u
	return r2
}

// hostAllowed accepts loopback names and the configured hosts.
func (g *Guard) hostAllowed(host string) bool {
	if host == "" {
		return false
	}
	if slices.Contains(g.o.Hosts, "*") {
		return true
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.Trim(name, "[]")
	if IsLoopback(name) {
		return true
	}
	for _, a := range g.o.Hosts {
		if strings.EqualFold(a, host) || strings.EqualFold(strings.Trim(a, "[]"), name) {
			return true
		}
	}
	return false
}

// originAllowed accepts loopback origins, the request's own host (it
// passed the Host check, so a rebound name never gets here) and the
// configured ones; a browser sends Origin on cross-site requests, so a
// page elsewhere is refused even when its name resolves here.
func (g *Guard) originAllowed(origin, host string) bool {
	if slices.Contains(g.o.Origins, "*") {
		return true
	}
	for _, a := range g.o.Origins {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return IsLoopback(u.Hostname()) || strings.EqualFold(u.Host, host)
}

// IsLoopback reports whether a host name or address is this machine's
// loopback.
func IsLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// headers are the security headers of every response.
func headers(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: with no-referrer Chromium sends
	// "Origin: null" on form posts, which the dashboard's CSRF check must
	// refuse.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
}

// WriteJSON answers with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
