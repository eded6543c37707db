package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/evokore/evokore/internal/approvalfeed"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/auth"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/httpfront"
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
	addr := hs.Addr()
	if f.addr != "" && f.addr != defaultAddr {
		addr = f.addr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return &exitError{2, fmt.Errorf("--http %s: want host:port", addr)}
	}
	if !httpfront.IsLoopback(host) && !hs.AuthRequired && !f.insecure {
		return &exitError{1, fmt.Errorf("refusing to serve HTTP on %s without authentication: anyone who can reach it could call every tool. Set EVOKORE_AUTH_REQUIRED=true (with EVOKORE_AUTH_TOKEN or EVOKORE_AUTH_MODE=jwt), listen on 127.0.0.1, or pass --insecure", addr)}
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
	stopHangup := reloadOnHangup(srv)
	defer stopHangup()
	store, refresh, err := sessionStore(s)
	if err != nil {
		_ = srv.Close()
		return &exitError{1, err}
	}
	defer store.Close()

	mcpHandler := srv.HTTPSessions(server.HTTPOptions{
		Store:   store,
		Refresh: refresh,
		Identify: func(r *http.Request) server.SessionOptions {
			p, _ := httpfront.PrincipalFrom(r.Context())
			so := server.SessionOptions{Role: p.Role, Identity: session.Identity{Subject: p.Subject}}
			if hs.TenantScoping {
				so.Identity.Tenant = p.Subject
			}
			return so
		},
		// The front checks Host against its own list, which operators
		// can extend; the SDK's fixed check would refuse those hosts.
		SDK: &mcp.StreamableHTTPOptions{DisableLocalhostProtection: true, Logger: logging.AtLeast(log, slog.LevelWarn)},
	})
	allowed := hs.AllowedHosts
	if host != "" && !httpfront.IsLoopback(host) && net.ParseIP(host) != nil && !net.ParseIP(host).IsUnspecified() {
		allowed = append(allowed, host)
	}
	var servers []string
	if hs.Issuer != "" {
		servers = []string{hs.Issuer}
	}
	front := httpfront.New(httpfront.Options{
		MCP: mcpHandler, Metrics: m.Handler(), Auth: authn, Health: srv.Problems,
		OnAuthFailure: func(r *http.Request, reason string) { srv.RecordAuthFailure(r.RemoteAddr, reason) },
		Approvals:     approvalfeed.Handler(approvalfeed.Options{Home: s.Home, Authorize: feedRole(authn)}),
		AllowedHosts:  allowed, AllowedOrigins: hs.AllowedOrigins,
		Resource: hs.Resource, AuthorizationServers: servers,
	})

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		_ = srv.Close()
		return &exitError{1, fmt.Errorf("listen on %s: %w", addr, err)}
	}
	log.Info(srv.Banner(fmt.Sprintf("streamable HTTP at http://%s/mcp", ln.Addr())))
	hsrv := &http.Server{Handler: front, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hsrv.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}

	grace := s.ShutdownGrace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	gctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	// Stop accepting at once; the connections of calls in flight stay
	// until their answers are written.
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
	store, err := sessionstore.Open(s)
	if err != nil {
		return nil, false, err
	}
	return store, sessionstore.Kind(s) != sessionstore.KindMemory, nil
}

// feedRole is the approvals feed's view of a caller the front already
// authenticated: a JWT's role claim, else admin (a static token, or no
// auth at all, already lets its holder call every tool the router
// serves). nil authentication leaves Authorize nil: everyone is admin.
func feedRole(authn auth.Authenticator) func(*http.Request) (string, bool) {
	if authn == nil {
		return nil
	}
	return func(r *http.Request) (string, bool) {
		p, ok := httpfront.PrincipalFrom(r.Context())
		if !ok {
			return "", false
		}
		if p.Role != "" {
			return p.Role, true
		}
		return "admin", true
	}
}
