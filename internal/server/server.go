package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/native/routing"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/search"
	"github.com/evokore/evokore/internal/session"
)

// Options configure a Server.
type Options struct {
	Settings config.Settings
	// Version is what initialize reports.
	Version string
	// Log receives what the router reports on stderr.
	Log io.Writer
	// Now is the clock of approvals, rate limits and cooldowns; nil means
	// time.Now. Tests move it.
	Now func() time.Time
}

// Server is the router assembled: the shared parts every session view is
// fed from. It serves any number of sessions; stdio has one.
type Server struct {
	opts      Options
	log       io.Writer
	config    *config.MCPConfig
	catalog   *catalog.Store
	proxy     *proxy.Supervisor
	router    *router.Router
	profile   catalog.Resolution
	legacy    bool
	content   Content
	closers   []func()
	closeOnce sync.Once
	// role is the RBAC role sessions run under: EVOKORE_ROLE, else the
	// active_role of permissions.yml; "" for none.
	role   string
	policy *policy.Policy
	stop   context.CancelFunc

	// Schema-deferred listing: armed by the first deferred listing,
	// satisfied by any describe_tool call, given up on by the fallback.
	deferArm      sync.Once
	describeSeen  atomic.Bool
	deferFallback atomic.Bool

	mu       sync.Mutex
	sessions []*session.Session
}

// New assembles the router from its settings. Bad files never stop it:
// a broken mcp.config.json is reported and the native tools still serve.
func New(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	s := &Server{opts: opts, log: opts.Log, legacy: opts.Settings.DiscoveryMode == config.ModeLegacy}

	cfg, err := config.LoadMCPConfig(opts.Settings.ConfigPath)
	if err != nil {
		s.logf("Failed to load mcp.config.json: %v", err)
		s.logf("No child servers will start; the native tools are available.")
		cfg = &config.MCPConfig{File: opts.Settings.ConfigPath}
	} else if cfg.Missing {
		s.logf("No mcp.config.json found. Running EVOKORE without proxy execution tools.")
	}
	s.config = cfg

	perms, err := config.LoadPermissions(opts.Settings.PermissionsPath, policy.ShippedPermissions)
	failClosed := false
	if err != nil {
		// Failing open would drop every deny the user wrote.
		s.logf("Failed to load permissions.yml: %v", err)
		s.logf("Until it is fixed, tools no shipped rule names are denied.")
		shipped := policy.ShippedPermissions
		perms, failClosed = &shipped, true
	}
	s.policy = policy.New(policy.Options{
		Permissions: perms,
		Servers:     cfg.Servers,
		DefaultDeny: opts.Settings.DefaultDeny || failClosed,
		Home:        opts.Settings.Home,
		ApprovalTTL: opts.Settings.ApprovalTTL,
		Cooldown:    opts.Settings.Cooldown,
		Now:         opts.Now,
	})
	s.role = opts.Settings.Role
	if s.role == "" {
		s.role = perms.ActiveRole
	}
	if s.role != "" && !s.policy.RBAC.HasRole(s.role) {
		s.logf("[EVOKORE] Role '%s' is not defined in %s; running with no role (flat rules).", s.role, perms.File)
		s.role = ""
	}
	pins, err := policy.OpenPins(opts.Settings.Home, opts.Now)
	if err != nil {
		s.logf("[EVOKORE] Tool pinning is off: %v", err)
	}

	table := &native.Table{}
	var semantic *search.Semantic
	if e := cfg.Discovery.Embeddings; e != nil {
		semantic = search.NewSemantic(e.URL, e.Model, filepath.Join(opts.Settings.Home, "embeddings"))
	}
	routing.Register(table, s, s)
	routing.RegisterDiscovery(table, s, semantic)
	host := &native.Host{
		Settings: opts.Settings,
		Config:   cfg,
		Semantic: semantic,
		Sessions: s.Sessions,
		Log:      opts.Log,
		Call:     s.callTool,
	}
	contrib := registerManagers(table, host, s)
	s.content, s.closers = contrib.Content, contrib.Closers

	var ids []string
	for _, srv := range cfg.Servers {
		ids = append(ids, srv.ID)
	}
	s.catalog = catalog.NewStore(table.Entries(), ids)
	s.proxy = proxy.New(proxy.Options{
		Servers:        cfg.Servers,
		Env:            opts.Settings.Env,
		Home:           opts.Settings.Home,
		BootTimeout:    opts.Settings.ChildBootTimeout,
		RequestTimeout: opts.Settings.ProxyRequestTimeout,
		ShutdownGrace:  opts.Settings.ShutdownGrace,
		Catalog:        s.catalog,
		Log:            opts.Log,
		Version:        opts.Version,
		Sessions:       s.Sessions,
		Pins:           pinsOrNil(pins),
	})
	host.Catalog = s.catalog
	for _, ready := range contrib.Ready {
		ready()
	}
	s.router = &router.Router{
		Catalog:   s.catalog,
		Natives:   table,
		Proxy:     s.proxy,
		Plugins:   contrib.Plugins,
		Observers: contrib.Observers,
	}
	s.policy.Install(s.router)
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	if pins != nil {
		// `evokore pins accept` rewrites the file; re-admit the tools then.
		go pins.Watch(ctx, time.Second, s.proxy.Readmit)
	}

	var user []catalog.Profile
	for _, p := range cfg.Discovery.Profiles {
		user = append(user, catalog.FromConfig(p, func(n string) bool { _, ok := native.Lookup(n); return ok }))
	}
	s.profile = catalog.Resolve(opts.Settings, cfg.Discovery.ActiveProfile, user)
	if s.profile.Warning != "" {
		s.logf("[EVOKORE] %s", s.profile.Warning)
	}
	return s
}

// callTool runs a tool through the full pipeline for a native handler.
func (s *Server) callTool(ctx context.Context, sess *session.Session, name string, args any) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	return s.router.Call(ctx, sess, &mcp.CallToolParamsRaw{Name: name, Arguments: raw})
}

// pinsOrNil keeps a nil *Pins from becoming a non-nil interface.
func pinsOrNil(p *policy.Pins) proxy.Pinner {
	if p == nil {
		return nil
	}
	return p
}

// Snapshot returns the current catalog.
func (s *Server) Snapshot() *catalog.Snapshot { return s.catalog.Snapshot() }

// Legacy reports whether every tool is listed (EVOKORE_TOOL_DISCOVERY_MODE=legacy).
func (s *Server) Legacy() bool { return s.legacy }

// Listed reports whether sess lists e right now: in legacy mode
// everything, otherwise what the profile lists plus the session's
// activations.
func (s *Server) Listed(sess *session.Session, e *catalog.Entry) bool {
	return s.legacy || s.profile.Profile.Lists(e) || sess.Active(e.Name)
}

// Status reports the child servers.
func (s *Server) Status() []proxy.ServerStatus { return s.proxy.Status() }

// Sessions lists the connected sessions, oldest first.
func (s *Server) Sessions() []*session.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sessions)
}

// StartChildren boots the children now instead of after the first
// client's handshake; caps are the client capabilities children may use.
func (s *Server) StartChildren(caps *mcp.ClientCapabilities) { s.proxy.Start(caps) }

// ChildrenBooted is closed once every child finished its first boot
// attempt.
func (s *Server) ChildrenBooted() <-chan struct{} { return s.proxy.Booted() }

// Close stops every child and the managers' background work. Sessions
// end with their transports.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.stop()
		s.proxy.Close()
		for _, c := range s.closers {
			c()
		}
	})
}

// Banner is the line logged when serving starts.
func (s *Server) Banner(transport string) string {
	mode := config.ModeDynamic
	if s.legacy {
		mode = config.ModeLegacy
	}
	return fmt.Sprintf("[EVOKORE] evokore %s router running on %s (tool discovery mode: %s, profile: %s via %s)",
		s.opts.Version, transport, mode, s.profile.Profile.Name, s.profile.Source)
}

func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.log, format+"\n", args...)
}

func (s *Server) addSession(sess *session.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions = append(s.sessions, sess)
}

func (s *Server) removeSession(sess *session.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions = slices.DeleteFunc(s.sessions, func(x *session.Session) bool { return x == sess })
}

// Connect serves one client session over t. Each session gets its own
// view of the shared router; the first session's handshake boots the
// children.
func (s *Server) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	v := newView(s)
	ss, err := v.connect(ctx, t)
	if err != nil {
		return nil, err
	}
	s.addSession(v.sess)
	go v.watch(ss)
	return ss, nil
}

// ServeStdio serves one session on stdin/stdout until the client closes
// stdin or ctx ends, then stops the children.
func (s *Server) ServeStdio(ctx context.Context) error {
	s.logf("%s", s.Banner("stdio"))
	ss, err := s.Connect(ctx, &mcp.StdioTransport{})
	if err != nil {
		s.Close()
		return err
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = ss.Close()
		<-done
	}
	s.Close()
	return nil
}
