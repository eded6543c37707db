package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/approvalfeed"
	"github.com/evokore/evokore/internal/auth"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/httpfront"
	"github.com/evokore/evokore/internal/httpguard"
	"github.com/evokore/evokore/internal/httpsession"
	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/logging"
	"github.com/evokore/evokore/internal/metrics"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/server"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/sessionstore"
	"github.com/evokore/evokore/internal/status"
)

// defaultAddr is --http given without an address: the variables decide.
const defaultAddr = "-"

// httpFlags are serve's HTTP flags.
type httpFlags struct {
	set      bool
	addr     string
	insecure bool
}

// serveHTTP serves MCP over streamable HTTP until ctx ends, then shuts
// down: the listener closes, calls in flight may finish within the
// shutdown grace, the sessions close and the children stop.
func serveHTTP(ctx context.Context, p *paths, s config.Settings, hs config.HTTPSettings, f httpFlags) error {
	addr, host, err := listenAddr(hs, f)
	if err != nil {
		return err
	}
	log := logging.New(os.Stderr, slog.LevelInfo)
	if hs.AuthRequired && hs.AuthMode == config.AuthJWT {
		if hs, err = hs.ForJWT(addr); err != nil {
			return &exitError{1, err}
		}
	}
	authn, closeAuth, err := authenticator(hs, log)
	if err != nil {
		return &exitError{1, err}
	}
	defer closeAuth()

	srv, m := httpRouter(p, s)
	stopHangup := reloadOnHangup(srv)
	defer stopHangup()
	store, refresh, err := sessionStore(s)
	if err != nil {
		_ = srv.Close()
		return &exitError{1, err}
	}
	defer store.Close()

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		_ = srv.Close()
		return &exitError{1, fmt.Errorf("listen on %s: %w", addr, err)}
	}
	front := httpfront.New(httpfront.Options{
		MCP: mcpHandler(srv, s, store, refresh, log), Metrics: m.Handler(), Health: srv.Problems, Degraded: storeHealth(store, refresh, log),
		Approvals: approvalfeed.Handler(approvalfeed.Options{Home: s.Home}),
		Guard: httpguard.Options{
			Hosts: allowedHosts(hs, host), Origins: hs.AllowedOrigins, Auth: authn,
			Identify:      identify(hs, srv.Role),
			OnAuthFailure: func(r *http.Request, reason string) { srv.Records().AuthFailure(r.RemoteAddr, reason) },
		},
		Resource: resourceURL(hs, ln, host, authn != nil, log), AuthorizationServers: authorizationServers(hs),
	})
	log.Info(srv.Banner(fmt.Sprintf("streamable HTTP at http://%s/mcp", ln.Addr())))
	return serveUntil(ctx, httpguard.NewServer(front, httpguard.Timeouts{}), httpguard.Listener(ln, httpguard.Caps{}), srv, s.Children.ShutdownGrace)
}

// listenAddr is the address to listen on (--http, else the variables)
// and its host. Anything but a loopback address needs authentication or
// --insecure.
func listenAddr(hs config.HTTPSettings, f httpFlags) (addr, host string, err error) {
	addr = hs.Addr()
	if f.addr != "" && f.addr != defaultAddr {
		addr = f.addr
	}
	host, _, err = net.SplitHostPort(addr)
	if err != nil {
		return "", "", &exitError{2, fmt.Errorf("--http %s: want host:port", addr)}
	}
	if !httpguard.IsLoopback(host) && !hs.AuthRequired && !f.insecure {
		return "", "", &exitError{1, fmt.Errorf("refusing to serve HTTP on %s without authentication: anyone who can reach it could call every tool. Set EVOKORE_AUTH_REQUIRED=true (with EVOKORE_AUTH_TOKEN or EVOKORE_AUTH_MODE=jwt), listen on 127.0.0.1, or pass --insecure", addr)}
	}
	return addr, host, nil
}

// httpRouter assembles the router for HTTP, with the metrics it is
// observed by.
func httpRouter(p *paths, s config.Settings) (*server.Server, *metrics.Metrics) {
	var srv *server.Server
	m := metrics.New(metrics.Gauges{
		Sessions: func() int { return len(srv.Sessions()) },
		ChildrenUp: func() int {
			n := 0
			for _, c := range srv.Status() {
				if c.Status == status.Connected {
					n++
				}
			}
			return n
		},
		PendingApprovals: func() int { return srv.PendingApprovals() },
	})
	srv = server.New(server.Options{Settings: s, Version: buildVersion(), Log: os.Stderr,
		Observers: []router.Observer{m}, StageHook: m.Counting,
		Watch: true, Settle: p.settleProjectFiles})
	return srv, m
}

// mcpHandler serves the router's MCP sessions at /mcp, each acting for
// the caller the guard identified.
func mcpHandler(srv *server.Server, s config.Settings, store sessionstore.Store, refresh bool, log *slog.Logger) http.Handler {
	return srv.HTTP(httpsession.Options{
		Store:   store,
		Refresh: refresh,
		TTL:     s.SessionTTL,
		Log:     log,
		Identify: func(r *http.Request) ingress.SessionOptions {
			who, _ := httpguard.CallerFrom(r.Context())
			so := ingress.SessionOptions{Role: who.Claim, Identity: session.Identity{Subject: who.Subject, Tenant: who.Tenant}}
			if who.Subject != "" {
				// The guard authenticated this token as the subject: a
				// token exchange child trades it for its own.
				so.Inbound, _ = auth.Bearer(r)
			}
			return so
		},
		// The front checks Host against its own list, which operators
		// can extend; the SDK's fixed check would refuse those hosts.
		SDK: &mcp.StreamableHTTPOptions{DisableLocalhostProtection: true, Logger: logging.AtLeast(log, slog.LevelWarn)},
	})
}

// allowedHosts are the Host headers the front accepts: the configured
// ones, and the address listened on when it is a specific IP.
func allowedHosts(hs config.HTTPSettings, host string) []string {
	allowed := hs.AllowedHosts
	if ip := net.ParseIP(host); host != "" && !httpguard.IsLoopback(host) && ip != nil && !ip.IsUnspecified() {
		allowed = append(allowed, host)
	}
	return allowed
}

// resourceURL names the protected resource by configuration, never by a
// request's Host: EVOKORE_OAUTH_RESOURCE, else the address evokore
// listens on.
func resourceURL(hs config.HTTPSettings, ln net.Listener, host string, authn bool, log *slog.Logger) string {
	if hs.Resource != "" {
		return hs.Resource
	}
	resource := "http://" + ln.Addr().String() + "/mcp"
	if ip := net.ParseIP(host); authn && ip != nil && ip.IsUnspecified() {
		log.Warn("[EVOKORE] Set EVOKORE_OAUTH_RESOURCE to the URL clients reach /mcp at: on a wildcard address the protected-resource metadata can only name " + resource)
	}
	return resource
}

// authorizationServers are the issuers the protected-resource metadata
// names.
func authorizationServers(hs config.HTTPSettings) []string {
	if hs.Issuer == "" {
		return nil
	}
	return []string{hs.Issuer}
}

// serveUntil serves ln until ctx ends or serving fails, then shuts down:
// it stops accepting at once, the router gives calls in flight the grace,
// and the connections of their answers stay until written (a second at
// most after the router shut down).
func serveUntil(ctx context.Context, hsrv *http.Server, ln net.Listener, srv *server.Server, grace time.Duration) error {
	served := make(chan error, 1)
	go func() { served <- hsrv.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	if grace <= 0 {
		grace = 5 * time.Second
	}
	gctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		_ = hsrv.Shutdown(gctx)
		close(stopped)
	}()
	_ = srv.Shutdown(gctx)
	select {
	case <-stopped:
	case <-time.After(time.Second):
		_ = hsrv.Close()
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}

// authenticator builds what checks bearer tokens; nil when
// authentication is off.
func authenticator(hs config.HTTPSettings, log *slog.Logger) (auth.Authenticator, func(), error) {
	if !hs.AuthRequired {
		return nil, func() {}, nil
	}
	switch hs.AuthMode {
	case config.AuthStatic:
		st := auth.NewStatic(hs.Tokens)
		if st.Empty() {
			log.Warn("[EVOKORE] EVOKORE_AUTH_REQUIRED is on but EVOKORE_AUTH_TOKEN is empty: every request will be refused.")
		}
		return st, func() {}, nil
	case config.AuthJWT:
		if hs.Audience == "" && hs.AnyAudience {
			log.Warn("[EVOKORE] " + config.AnyAudienceVar + "=unsafe: JWTs minted for any service are accepted here.")
		}
		j, err := auth.NewJWT(auth.JWTOptions{JWKSURL: hs.JWKSURI, Issuer: hs.Issuer, Audience: hs.Audience, AnyAudience: hs.AnyAudience, Log: log})
		if err != nil {
			return nil, nil, fmt.Errorf("EVOKORE_AUTH_MODE=jwt: %w (set EVOKORE_OAUTH_JWKS_URI)", err)
		}
		return j, j.Close, nil
	}
	return auth.DenyAll{}, func() {}, nil
}

// sessionStore is where HTTP sessions are kept, and whether it is shared
// with other replicas (whose changes must then be re-read per request).
// EVOKORE_SESSION_STORE chooses it: memory (the default) is this
// process's own; file and redis may be written by other routers too.
func sessionStore(s config.Settings) (sessionstore.Store, bool, error) {
	o := sessionstore.ReadOptions(s.Env, s.Home, s.SessionTTL)
	store, err := sessionstore.Open(o)
	if err != nil {
		return nil, false, err
	}
	return store, o.Shared(), nil
}

// storeHealth reports a shared session store this replica cannot reach.
// The probe loads an id no session has: a store that answers says "not
// found". /health is public, so it names the store and not the error.
func storeHealth(store sessionstore.Store, shared bool, log *slog.Logger) func() []string {
	if !shared {
		return nil
	}
	return func() []string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if _, err := store.Load(ctx, "health-probe"); err != nil && !errors.Is(err, sessionstore.ErrNotFound) {
			log.Warn("health: the shared session store is unreachable", "err", err)
			return []string{"session store unreachable: sessions are served by the replica that holds them; rate-limited and approval-gated calls are refused"}
		}
		return nil
	}
}

// identify is who an HTTP caller is, for the MCP session it opens and the
// approvals feed alike (httpguard's tenancy rule). Role: a JWT's role
// claim, else the role the configuration gives new sessions (EVOKORE_ROLE,
// else permissions.yml's active_role): a static token has exactly that
// role, never more. With no role configured, sessions run unrestricted,
// and so the caller is admin. Tenant: the JWT's subject with
// EVOKORE_TENANT_SCOPING, else "" (one tenant).
func identify(hs config.HTTPSettings, configured func() string) func(auth.Principal) httpguard.Caller {
	return func(p auth.Principal) httpguard.Caller {
		c := httpguard.Caller{Subject: p.Subject, Role: p.Role, Claim: p.Role}
		if c.Role == "" {
			c.Role = configured()
		}
		if c.Role == "" {
			c.Role = approvalfeed.RoleAdmin
		}
		if hs.TenantScoping {
			c.Tenant = p.Subject
		}
		return c
	}
}
