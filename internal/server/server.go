package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/childauth"
	"github.com/evokore/evokore/internal/childview"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/httpsession"
	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/lifecycle"
	"github.com/evokore/evokore/internal/logging"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/native/routing"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/records"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/search"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/sharedstate"
	"github.com/evokore/evokore/internal/skills"
	"github.com/evokore/evokore/internal/stdio"
	"github.com/evokore/evokore/internal/tasks"
	"github.com/evokore/evokore/internal/tracing"
)

// Options configure a Server.
type Options struct {
	Settings config.Settings
	// Version is what initialize reports.
	Version string
	// Log receives what the router reports on stderr, through
	// logging.New; Logger, when set, is used instead.
	Log    io.Writer
	Logger *slog.Logger
	// Now is the clock of approvals, rate limits and cooldowns; nil means
	// time.Now. Tests move it.
	Now func() time.Time
	// Watch reloads mcp.config.json and permissions.yml when they change
	// on disk (see Reload).
	Watch bool
	// Settle decides again, at each reload, which files the router reads
	// and what the project directory is trusted with (cmd/evokore applies
	// the trust record as it is then); nil keeps Settings as they are.
	// It returns what to say on stderr.
	Settle func(config.Settings) (config.Settings, []string)
	// Observers see every dispatched call after the router's own
	// (metrics).
	Observers []router.Observer
	// StageHook, when set, wraps the policy stages that turn calls away
	// for load ("rate_limit", "cooldown"), so their refusals can be
	// counted without the call path knowing.
	StageHook func(name string, st router.Stage) router.Stage
	// CodeSandbox starts run_code's sandbox process; nil runs this
	// binary as it (codemode.SelfCommand).
	CodeSandbox func() (procgroup.Spec, error)
}

// ErrServerClosed is returned by Connect after Shutdown began.
var ErrServerClosed = errors.New("evokore: server closed")

// Server is the composition root: it builds the router's shared parts
// (config, policy, catalog, natives, supervisor, pipeline) and owns their
// lifecycle. Any number of sessions connect to it; stdio has one.
//
// New builds and starts nothing; Start begins the background work
// (watchers, the skills index, plugin publication); Shutdown stops
// accepting sessions, lets calls in flight finish until its context ends,
// cancels the rest, closes the sessions, then stops the parts in reverse
// construction order. Reload replaces the configuration it serves while
// it runs.
type Server struct {
	opts    Options
	log     *slog.Logger
	catalog *catalog.Store
	proxy   *proxy.Supervisor
	router  *router.Router
	policy  *policy.Policy
	pins    *policy.Pins
	legacy  bool
	content Content
	// children is what sessions see of the children's content.
	children childview.Children
	// manyClients is set once the router serves HTTP.
	manyClients atomic.Bool

	// gen is the configuration in force: the files as last read, the
	// profile and role they settle, their problems. Reload publishes a
	// new one whole; readers load it once and never lock (see reload.go).
	gen atomic.Pointer[generation]
	// reloadMu serialises reloads; refused is the last reload refused
	// since the last one that succeeded, nil when none.
	reloadMu sync.Mutex
	refused  atomic.Pointer[ReloadStatus]
	// sharedProblem is why the shared (Redis) state could not be reached
	// at start; it stays until a restart.
	sharedProblem atomic.Pointer[string]
	// records are the audit log, webhooks and session records.
	records *records.Records
	// settings are the parts' own settings, read from the environment
	// once, at New.
	settings PartSettings
	// tracing exports OTLP traces and metrics; nil unless an OTLP
	// endpoint is set.
	tracing *tracing.Exporter
	// tasks run the calls made as MCP tasks (tasks.go); methods are the
	// methods the router serves itself (ingress.Methods).
	tasks   *tasks.Manager
	methods ingress.Methods
	// skillLib is the skill library the Skills Extension serves (skills.go).
	skillLib *skills.Library

	// Schema-deferred listing: armed by the first deferred listing,
	// satisfied by any describe_tool call, given up on by the fallback.
	deferArm      sync.Once
	describeSeen  atomic.Bool
	deferFallback atomic.Bool

	// parts start at Start, in construction order, and stop at
	// Shutdown, in reverse; every goroutine the server starts is
	// theirs.
	parts        lifecycle.Group
	shutdownOnce sync.Once
	shutdownErr  error
	calls        lifecycle.InFlight
	flushers     []func(context.Context)
	// afterHandshake run once, when a session's first request has been
	// handled (see view.answer).
	handshakeOnce  sync.Once
	afterHandshake []func()

	mu      sync.Mutex
	closing bool
	views   []*View
}

// New assembles the router from its settings. Bad files never stop it:
// a broken mcp.config.json is reported and the native tools still serve.
// It starts nothing.
func New(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Logger == nil {
		opts.Logger = logging.New(opts.Log, slog.LevelInfo)
	}
	s := &Server{opts: opts, log: opts.Logger}
	// serve reported the values the readers could not use at start.
	s.settings, _ = ReadPartSettings(opts.Settings.Env)
	s.legacy = s.settings.Catalog.Discovery.Mode == config.ModeLegacy
	s.tasks = tasks.New(s.settings.Tasks, s.log)
	s.methods = s.taskMethods()
	maps.Copy(s.methods, s.skillMethods())

	g := &generation{number: 1, settings: opts.Settings, loaded: time.Now(), superseded: make(chan struct{})}
	// The native entries' hashes are computed on another core while the
	// configuration is read; the goroutine ends when they are done.
	go native.Prepare()
	g.config, g.configSum = s.loadConfig()
	// Opened first so they close last, after every part that reports
	// into them.
	s.records = records.Open(records.Options{Settings: s.settings.Records, Home: opts.Settings.Home, Env: opts.Settings.Env,
		UntrustedConfig: opts.Settings.UntrustedConfig, Config: g.config, Log: s.log})
	s.parts.OnStop(s.records.Close)
	s.openTracing()
	perms, failClosed := s.loadPermissions()
	g.perms, g.permsSum = perms, fileSum(opts.Settings.PermissionsPath)
	s.pins = s.openPins()

	var ids []string
	for _, srv := range g.config.Servers {
		ids = append(ids, srv.ID)
	}
	s.catalog = catalog.NewStore(nil, ids)

	table := &native.Table{}
	var semantic *search.Semantic
	if e := g.config.Discovery.Embeddings; e != nil {
		semantic = search.NewSemantic(e.URL, e.Model, filepath.Join(opts.Settings.Home, "embeddings"))
	}
	routing.Register(table, s, s)
	routing.RegisterDiscovery(table, s, semantic)
	host := &native.Host{
		Config:   s.Config,
		Catalog:  s.catalog,
		Semantic: semantic,
		Sessions: s.Sessions,
		Log:      s.log,
		Call:     s.callTool,
	}
	contrib := registerManagers(table, host, s)
	s.content = contrib.Content
	s.skillLib = contrib.Skills
	if s.skillLib != nil {
		s.parts.OnStart(func(ctx context.Context) { s.parts.Go(func() { s.syncChildSkills(ctx) }) })
	}
	for _, start := range contrib.Starters {
		s.parts.OnStart(start)
	}
	s.afterHandshake = contrib.AfterHandshake
	for _, stop := range contrib.Closers {
		s.parts.OnStop(stop)
	}
	s.catalog.SetNatives(table.Entries())
	po := s.policyOptions(g, failClosed)
	po.Binders = contrib.Binders
	s.policy = policy.New(po)
	// evokore's authorization to its HTTP children: their tokens under
	// EVOKORE_HOME, a login by `evokore auth login` seen as it lands;
	// callers' own tokens there too, or in Redis when replicas share.
	authz := childauth.New(childauth.Options{Home: opts.Settings.Home, Env: opts.Settings.Env, Log: s.log})
	s.shareState(s.policy, authz)
	s.parts.OnStop(s.policy.Approvals.Close)
	s.settle(g, s.policy.Rules().RBAC, failClosed)
	g.profile = s.resolveProfile(g)
	s.gen.Store(g)

	s.parts.OnStart(func(ctx context.Context) {
		s.parts.Go(func() { authz.Watch(ctx, func() []config.Server { return s.Config().Servers }) })
	})
	s.proxy = proxy.New(proxy.Options{
		Authorizer:      authz,
		Servers:         g.config.Servers,
		Env:             opts.Settings.Env,
		Home:            opts.Settings.Home,
		BootTimeout:     opts.Settings.Children.Boot,
		RequestTimeout:  opts.Settings.Children.Request,
		ShutdownGrace:   opts.Settings.Children.ShutdownGrace,
		Catalog:         s.catalog,
		Log:             opts.Log,
		Logger:          s.log,
		Version:         opts.Version,
		Sessions:        s.Sessions,
		Pins:            s.quarantinePins(),
		ResourceUpdated: s.resourceUpdated,
		ManyClients:     s.manyClients.Load,
		Instances:       s.settings.Instances,
	})
	s.parts.OnStop(s.proxy.Close)
	s.children = childview.Children{Proxy: s.proxy, Catalog: s.catalog,
		Rules: func() *policy.RBAC { return s.policy.Rules().RBAC },
		Own: func() []*mcp.Prompt {
			if s.content == nil {
				return nil
			}
			return s.content.Prompts()
		}}
	if s.pins != nil {
		// `evokore pins accept` rewrites the file; re-admit the tools then.
		s.parts.OnStart(func(ctx context.Context) {
			s.parts.Go(func() { s.pins.Watch(ctx, time.Second, s.proxy.Readmit) })
		})
	}

	s.router = router.New(router.Options{
		Catalog: s.catalog,
		Natives: table,
		Proxy:   s.proxy,
		Plugins: contrib.Plugins,
		Stages:  s.stages(),
		// In-flight accounting, so Shutdown can wait for and cancel
		// calls, then the trace span when OTLP export is on.
		Middleware:    []router.Middleware{s.track, s.span()},
		NativeTimeout: s.opts.Settings.Children.Request,
		OnPanic: func(c *router.Call, v any, stack []byte) {
			s.log.Error("[EVOKORE] A tool call panicked; the call answered an internal error and the router goes on", "tool", c.Entry.Name, "panic", fmt.Sprint(v), "stack", string(stack))
		},
		// What enforces comes first (cooldowns, refunds), what only
		// counts and records after.
		Observers: slices.Concat(contrib.Observers, s.policy.Observers(), opts.Observers, s.records.Observers()),
	})

	if opts.Watch {
		s.parts.OnStart(func(ctx context.Context) {
			s.parts.Go(func() { s.watchFiles(ctx) })
		})
	}
	return s
}

// stages is the one place the pipeline's order is written down:
// nothing about a held tool is trusted, the role decides before the
// arguments are looked at, and an approval is minted only for a call that
// is valid and allowed.
func (s *Server) stages() []router.Stage {
	p := s.policy.Stages()
	hook := s.opts.StageHook
	if hook == nil {
		hook = func(_ string, st router.Stage) router.Stage { return st }
	}
	return []router.Stage{
		router.Quarantine,
		p.Permission,
		router.Validate,
		p.Approval,
		hook("rate_limit", p.RateLimit),
		hook("cooldown", p.Cooldown),
	}
}

// span is the trace span middleware when OTLP export is on, else nil.
func (s *Server) span() router.Middleware {
	if s.tracing == nil {
		return nil
	}
	return s.tracing.Middleware
}

func (s *Server) loadConfig() (*config.MCPConfig, string) {
	path := s.opts.Settings.ConfigPath
	// One read: the digest is of the bytes parsed, not of a second read
	// that may see another version of the file.
	cfg, src, err := config.ReadMCPConfig(path)
	digest := ""
	if src != nil {
		digest = sum(src)
	}
	if err != nil {
		// EVOKORE-MCP's line, which scripts match: kept to the byte.
		s.log.Info("Failed to load mcp.config.json: " + err.Error())
		s.log.Info("No child servers will start; the native tools are available.")
		return &config.MCPConfig{File: path}, digest
	}
	if cfg.Missing {
		s.log.Info("No mcp.config.json found. Running EVOKORE without proxy execution tools.")
	}
	return cfg, digest
}

// loadPermissions reads permissions.yml; a broken file fails closed.
func (s *Server) loadPermissions() (*config.Permissions, bool) {
	perms, err := config.LoadPermissions(s.opts.Settings.PermissionsPath, policy.ShippedPermissions())
	if err != nil {
		// Failing open would drop every deny the user wrote.
		s.log.Info("Failed to load permissions.yml", "err", err)
		s.log.Info("Until it is fixed, tools no shipped rule names are denied.")
		shipped := policy.ShippedPermissions()
		return &shipped, true
	}
	return perms, false
}

// policyOptions are the policy's options for generation g: its files,
// and the approvals mode the settings or the config choose.
func (s *Server) policyOptions(g *generation, failClosed bool) policy.Options {
	opts := s.opts
	mode := s.settings.Policy.ApprovalModeFor(g.config, g.settings.UntrustedConfig, s.log)
	return policy.Options{
		Permissions:  g.perms,
		Servers:      g.config.Servers,
		DefaultDeny:  s.settings.Policy.DefaultDeny || failClosed,
		Home:         opts.Settings.Home,
		ApprovalTTL:  approvalTTL,
		Cooldown:     failureCooldown,
		Now:          opts.Now,
		ApprovalMode: mode,
		OnApproval:   s.approvalEvent,
	}
}

// settle sets the role sessions of generation g run under and the
// problems that keep it from serving as configured.
func (s *Server) settle(g *generation, rbac *policy.RBAC, failClosed bool) {
	g.role = s.settings.Policy.SessionRole(g.perms)
	if g.role != "" && !rbac.HasRole(g.role) {
		// A typo, a look-alike or an invisible character must not fall
		// back to the permissive flat rules: refuse instead.
		msg := policy.UndefinedRoleText(g.role, g.perms.File)
		s.log.Info("[EVOKORE] " + msg) // the text clients see too, from policy
		g.problems = append(g.problems, msg)
	}
	if failClosed {
		g.problems = append(g.problems, "permissions.yml could not be read; tools no shipped rule names are denied until it is fixed")
	}
}

// resolveProfile settles generation g's discovery profile.
func (s *Server) resolveProfile(g *generation) catalog.Resolution {
	var user []catalog.Profile
	for _, p := range g.config.Discovery.Profiles {
		user = append(user, catalog.FromConfig(p, func(n string) bool { _, ok := native.Lookup(n); return ok }))
	}
	r := catalog.Resolve(s.settings.Catalog.Discovery, g.config.Discovery.ActiveProfile, user)
	if r.Warning != "" {
		s.log.Info("[EVOKORE] " + r.Warning) // the text the status shows, from catalog
	}
	return r
}

// shareState moves the rate limits and approvals into Redis when
// EVOKORE_SESSION_STORE=redis, so every replica enforces the same ones.
// New dials nothing: the dial is a part started at Start, before any
// session is served. A Redis that does not answer leaves them failing
// closed, not local.
func (s *Server) shareState(p *policy.Policy, authz *childauth.Manager) {
	set := s.opts.Settings
	share := sharedstate.ReadOptions(set.Env, set.Home, set.SessionTTL)
	if !share.Enabled() {
		return
	}
	// Refused until Start has reached Redis: nothing passes on local
	// state that should have been shared.
	notYet := errors.New("shared state not connected yet: the router has not started")
	sharedstate.AttachUnavailable(p, notYet)
	authz.UseSharedTokens(nil, notYet)
	s.tasks.Use(sharedstate.TasksUnavailable{Err: notYet})
	s.parts.OnStart(func(ctx context.Context) {
		sh, err := sharedstate.Open(ctx, share)
		if err == nil {
			if err = sh.Attach(p); err != nil {
				_ = sh.Close()
			}
		}
		if err != nil {
			msg := "shared state unavailable, so rate-limited and approval-gated calls and tasks are refused: " + err.Error()
			s.log.Info("[EVOKORE] " + msg)
			s.sharedProblem.Store(&msg)
			sharedstate.AttachUnavailable(p, err)
			s.tasks.Use(sharedstate.TasksUnavailable{Err: err})
			authz.UseSharedTokens(nil, err)
			return
		}
		authz.UseSharedTokens(sharedTokens(sh, share))
		// A task made through one replica is read and cancelled through
		// any other.
		s.tasks.Use(sh.Tasks)
		// A child's sealed requestState (proxy, era.go) verifies on any
		// replica that shares the key; the seal has a domain of its own.
		s.proxy.SetStateKey(sh.Key)
		s.parts.OnStop(func() { _ = sh.Close() })
	})
}

// sharedTokens is where callers' upstream tokens live across replicas:
// Redis, sealed with a key derived from EVOKORE_APPROVAL_KEY_FILE. A key
// Redis itself holds would seal nothing from whoever reads Redis, so
// without the file callers' tokens are refused, naming it.
func sharedTokens(sh *sharedstate.Shared, share sharedstate.Options) (*childauth.RedisTokens, error) {
	if share.KeyFile == "" {
		return nil, fmt.Errorf("callers' own tokens to subject servers are kept in Redis sealed with the key in %s, which is not set; set it on every replica", sharedstate.KeyFileVar)
	}
	return childauth.NewRedisTokens(sh.Client, share.Store.Prefix, sh.Key)
}

func (s *Server) openPins() *policy.Pins {
	// An unreadable store still pins: it holds every tool (fail closed).
	pins, err := policy.OpenPins(s.opts.Settings.Home, s.opts.Now)
	if err != nil {
		s.log.Info("[EVOKORE] Cannot read the pins store; every child tool is held", "err", err)
	}
	return pins
}

// Start begins the background work: the skills index and watcher, plugin
// publication, the pins watcher. It is called by the first Connect if not
// before, and does nothing the second time.
func (s *Server) Start() { s.parts.Start() }

// handshook runs the work deferred until a client was answered: the
// first request of the first session. Only the first call does anything.
func (s *Server) handshook() {
	s.handshakeOnce.Do(func() {
		for _, start := range s.afterHandshake {
			start()
		}
	})
}

// Shutdown stops the server: no new session is accepted, calls in flight
// may finish until ctx ends and are cancelled after, the sessions are
// closed, then the children and managers stop in reverse construction
// order and every background goroutine is joined. It returns ctx's error
// when calls had to be cancelled. Later calls return the first result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		views := slices.Clone(s.views)
		s.mu.Unlock()

		if !s.calls.Wait(ctx) {
			s.shutdownErr = ctx.Err()
			// The tasks still running fail saying why before their calls
			// are cancelled (which would fail them as cancelled calls).
			s.tasks.Close()
			s.calls.CancelAll()
			// A cancelled call answers promptly unless its handler ignores
			// its context; do not wait for that one forever.
			wctx, cancel := context.WithTimeout(context.Background(), time.Second)
			s.calls.Wait(wctx)
			cancel()
		}
		// A task waiting for its client's input is no call in flight.
		s.tasks.Close()
		// A call's answer is written after its dispatch returns; let the
		// transports that can tell finish writing before the sessions go.
		s.mu.Lock()
		flushers := slices.Clone(s.flushers)
		s.mu.Unlock()
		for _, flush := range flushers {
			flush(ctx)
		}
		for _, v := range views {
			v.Close()
		}
		s.parts.Stop()
	})
	return s.shutdownErr
}

// Close shuts the server down, giving calls in flight the shutdown grace.
func (s *Server) Close() error {
	grace := s.opts.Settings.Children.ShutdownGrace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return s.Shutdown(ctx)
}

// callTool runs a tool through the full pipeline for a native handler.
func (s *Server) callTool(ctx context.Context, sess *session.Session, name string, args any) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	return s.router.Call(ctx, sess, &mcp.CallToolParamsRaw{Name: name, Arguments: raw})
}

// quarantinePins is the pin store as the supervisor uses it, reporting
// every tool it holds; nil when there is no store (a nil *Pins must not
// become a non-nil interface).
func (s *Server) quarantinePins() proxy.Pinner {
	if s.pins == nil {
		return nil
	}
	return s.records.Pins(s.pins)
}

// Snapshot returns the current catalog.
func (s *Server) Snapshot() *catalog.Snapshot { return s.catalog.Snapshot() }

// Legacy reports whether every tool is listed (EVOKORE_TOOL_DISCOVERY_MODE=legacy).
func (s *Server) Legacy() bool { return s.legacy }

// Listed reports whether sess lists e right now (catalog.Visible).
func (s *Server) Listed(sess *session.Session, e *catalog.Entry) bool {
	return catalog.Visible(e, s.gen.Load().profile.Profile, s.legacy, sess.Active)
}

// RoleNote says what sess's role lets a call of name do, when it is not
// a plain allow (discover_tools' explain: "<tool name>").
func (s *Server) RoleNote(sess *session.Session, name string) string {
	return s.policy.Rules().RBAC.Level(sess.Role, name).CallNote(sess.Role)
}

// Status reports the child servers.
func (s *Server) Status() []proxy.ServerStatus { return s.proxy.Status() }

// Sessions lists the connected sessions, oldest first.
func (s *Server) Sessions() []*session.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*session.Session, 0, len(s.views))
	for _, v := range s.views {
		out = append(out, v.sess)
	}
	return out
}

// StartChildren boots the children now instead of after the first
// client's handshake; caps are the client capabilities children may use.
func (s *Server) StartChildren(caps *mcp.ClientCapabilities) { s.proxy.Start(caps) }

// ChildrenBooted is closed once every child finished its first boot
// attempt.
func (s *Server) ChildrenBooted() <-chan struct{} { return s.proxy.Booted() }

// Banner is the line logged when serving starts.
func (s *Server) Banner(transport string) string {
	mode := config.ModeDynamic
	if s.legacy {
		mode = config.ModeLegacy
	}
	profile := s.gen.Load().profile
	return fmt.Sprintf("[EVOKORE] evokore %s router running on %s (tool discovery mode: %s, profile: %s via %s)",
		s.opts.Version, transport, mode, profile.Profile.Name, profile.Source)
}

// attach records a view whose session is bound; false once Shutdown began.
func (s *Server) attach(v *View) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.views = append(s.views, v)
	return true
}

func (s *Server) detach(v *View) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.views = slices.DeleteFunc(s.views, func(x *View) bool { return x == v })
}

// bootOnDiscover boots the children once a client discovered the
// server: a client of the stateless protocol (2026-07-28, the go-sdk
// client's default) on a connection of its own (stdio) sends no
// initialize, so nothing else would boot them. They boot without client
// capabilities, which such a client does not declare up front (no roots,
// sampling or elicitation is offered to them).
func bootOnDiscover(s *Server) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err == nil && method == "server/discover" {
				s.proxy.Start(nil)
			}
			return res, err
		}
	}
}

// Closing reports whether Shutdown began.
func (s *Server) Closing() bool { return s.isClosing() }

// OnShutdown registers fn to run at Shutdown once the calls in flight
// ended (or were cancelled) and before the sessions close: a transport
// finishes writing its answers there. fn gets Shutdown's context.
func (s *Server) OnShutdown(fn func(context.Context)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushers = append(s.flushers, fn)
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// Connect serves one client session over t (in-memory for tests). Each
// session gets its own view of the shared router; the first session's
// handshake boots the children.
func (s *Server) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	return s.ConnectAs(ctx, t, ingress.SessionOptions{})
}

// ConnectAs is Connect for a session that acts for someone in particular.
func (s *Server) ConnectAs(ctx context.Context, t mcp.Transport, so ingress.SessionOptions) (*mcp.ServerSession, error) {
	if s.isClosing() {
		return nil, ErrServerClosed
	}
	return s.Open(so).Connect(ctx, t, nil)
}

// ServeStdio serves one session on stdin/stdout (package stdio) until the
// client closes stdin or ctx ends, then shuts down, giving calls in
// flight the shutdown grace. It returns the session's error, if any. t is
// the transport OpenStdio opened.
func (s *Server) ServeStdio(ctx context.Context, t *stdio.Transport) error {
	s.log.Info(s.Banner("stdio"))
	// A client that writes its requests and closes stdin at once is
	// answered first, each within the per-call timeout.
	t.Drain = s.opts.Settings.Children.Request + time.Second
	s.OnShutdown(t.Answered)
	var err error
	if s.isClosing() {
		err = ErrServerClosed
	} else {
		err = stdio.Serve(ctx, t, s)
	}
	closeErr := s.Close()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		return err
	}
	if closeErr != nil && !errors.Is(closeErr, context.DeadlineExceeded) {
		return closeErr
	}
	return nil
}

// HTTP serves the router's sessions over streamable HTTP (package
// httpsession): the handler for /mcp. It starts nothing.
// From then on the router serves many clients, so no caller's roots
// reach a child (package proxy, roots.go).
func (s *Server) HTTP(o httpsession.Options) *httpsession.Handler {
	s.manyClients.Store(true)
	return httpsession.New(s, o)
}

// PendingApprovals counts the approvals waiting for a decision.
func (s *Server) PendingApprovals() int { return s.policy.Approvals.PendingCount() }

// OpenCalls reports how many calls are in flight to a child server.
func (s *Server) OpenCalls(server string) int { return s.proxy.OpenCalls(server) }

// approvalEvent records a step of an approval, with the role of the
// session that asked.
func (s *Server) approvalEvent(a policy.ApprovalEvent) {
	role := ""
	for _, v := range s.Sessions() {
		if v.ID == a.Session {
			role = v.Role
		}
	}
	s.records.Approval(a, role)
}

// Records are what the router tells operators: the audit log, webhooks,
// session replay, and the events they are made of.
func (s *Server) Records() *records.Records { return s.records }

// resourceUpdated passes a child's resource update to every session; the
// SDK sends it only to the sessions subscribed to that URI.
func (s *Server) resourceUpdated(ctx context.Context, params *mcp.ResourceUpdatedNotificationParams) {
	s.mu.Lock()
	views := append([]*View(nil), s.views...)
	s.mu.Unlock()
	for _, v := range views {
		_ = v.mcp.ResourceUpdated(ctx, params)
	}
}

// track is the router Middleware that counts each dispatched call in
// until it returns, so that Shutdown can wait for it and cancel it.
func (s *Server) track(next router.Dispatch) router.Dispatch {
	return func(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
		ctx, end := s.calls.Begin(ctx)
		defer end()
		return next(ctx, c)
	}
}
