package proxy

//lint:file-ignore SA1019 sampling, roots and logging pass through on purpose; see docs/decisions.md

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/logging"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/status"
)

// Statuses of a child server (see package status).
const (
	StatusDisabled  = status.Disabled
	StatusBooting   = status.Booting
	StatusConnected = status.Connected
	StatusError     = status.Error
)

// Pinner holds tools an operator has not accepted: definitions that
// changed since they were pinned, tools a pinned server added later, and
// every tool when the pins cannot be read. It returns the model-visible
// message per held child tool name, and a problem with its store to log.
type Pinner interface {
	Check(server config.Server, entries []*catalog.Entry) (held map[string]string, problem string)
}

// Options configure a Supervisor.
type Options struct {
	// Servers are the configured servers in config order.
	Servers []config.Server
	// Env resolves placeholders and builds children's environments.
	Env config.Env
	// Home holds the manifest cache.
	Home           string
	BootTimeout    time.Duration
	RequestTimeout time.Duration
	// ShutdownGrace is how long a child gets after its stdin closes, and
	// again after SIGTERM.
	ShutdownGrace time.Duration
	Catalog       *catalog.Store
	// Logger receives the sentinels and boot messages; nil writes them
	// to Log through the compatibility handler.
	Logger *slog.Logger
	// Log receives the children's stderr, a line at a time.
	Log io.Writer
	// Version is reported to children as the client version.
	Version string
	// Sessions lists the connected client sessions, for passing through
	// log messages and requests not tied to a call.
	Sessions func() []*session.Session
	// Pins, when set, quarantines changed tools of servers that pin.
	Pins Pinner
	// ResourceUpdated passes on a child's notification that a resource
	// some session subscribed to changed; the receiver tells only the
	// sessions subscribed to that URI.
	ResourceUpdated func(ctx context.Context, params *mcp.ResourceUpdatedNotificationParams)
	// FirstBoot, when set, is told each child's status as its first boot
	// ends (connected or failed), on that child's goroutine, so a command
	// can say so at once rather than when the slowest child is done.
	FirstBoot func(ServerStatus)
	// Authorizer, when set, authorizes evokore to its HTTP children: it
	// plugs into the HTTP carrier's http.Client (carrier.go), and a call
	// of a child that needs authorization asks its caller (authorize.go).
	Authorizer Authorizer
	// ManyClients reports whether the router serves many clients (serve
	// --http): a child then never gets a caller's roots (roots.go).
	ManyClients func() bool
	// Instances bound the per-caller instances of servers whose scope is
	// subject or session (instances.go).
	Instances InstanceSettings
}

// Supervisor owns the child servers.
type Supervisor struct {
	opts    Options
	log     *slog.Logger
	content contentState
	// set is the configured children, replaced whole by Reconfigure:
	// readers load it without locking and see one configuration.
	set    atomic.Pointer[childSet]
	routes routes
	// stateKey seals the requestStates of children's input_required
	// (era.go); SetStateKey shares one across replicas.
	stateKey atomic.Pointer[[]byte]

	// reconf serialises Reconfigure and guards what Start and Close share
	// with it: whether the first boot round began (and the capabilities
	// it was given), and the children being drained after a reload.
	reconf   sync.Mutex
	started  bool
	caps     *mcp.ClientCapabilities
	retiring map[*child]struct{}

	// instances are the per-caller instances (instances.go), within
	// instanceSettings.
	instances        instances
	instanceSettings InstanceSettings
	// held are the calls of callers of the new era to children of the
	// old era waiting for their callers' retries (held.go).
	held heldCalls

	// logLevel is the most verbose level a client asked for; children get
	// it, so their log messages flow to the router to be passed on.
	logLevel atomic.Value // mcp.LoggingLevel

	startOnce sync.Once
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	booted    chan struct{}
}

// lockedWriter serialises writes: boot messages and every child's stderr
// share one stream, a line at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// New prepares a supervisor. Nothing starts until Start; cached tool
// lists are published right away so known children's tools are listed
// before they boot.
func New(opts Options) *Supervisor {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	opts.Log = &lockedWriter{w: opts.Log}
	if opts.Logger == nil {
		opts.Logger = logging.New(opts.Log, slog.LevelInfo)
	}
	if opts.Sessions == nil {
		opts.Sessions = func() []*session.Session { return nil }
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Supervisor{opts: opts, log: opts.Logger, ctx: ctx, cancel: cancel, booted: make(chan struct{}), retiring: map[*child]struct{}{}}
	s.routes = newRoutes()
	s.instanceSettings = opts.Instances.withDefaults()
	s.stateKey.Store(newStateKey())
	s.content.init()
	set := &childSet{byID: map[string]*child{}}
	for _, spec := range opts.Servers {
		set.add(newChild(s, spec))
	}
	s.set.Store(set)
	for _, c := range set.list {
		s.publishCached(c)
	}
	return s
}

// publishCached lists a child's cached tools before it boots.
func (s *Supervisor) publishCached(c *child) {
	if c.spec.Disabled || s.opts.Home == "" {
		return
	}
	if tools := loadManifest(s.opts.Home, c.spec); tools != nil {
		s.register(c, tools, false)
	}
}

// Start boots every enabled child in parallel, in the background. caps
// are the client's capabilities: children are offered sampling,
// elicitation and roots only when the client can answer them. Start runs
// once; later calls do nothing.
func (s *Supervisor) Start(caps *mcp.ClientCapabilities) {
	s.startOnce.Do(func() {
		var round sync.WaitGroup
		s.reconf.Lock()
		s.started, s.caps = true, caps
		for _, c := range s.children() {
			if c.spec.Disabled {
				continue
			}
			round.Add(1)
			s.launch(c, func() {
				if s.opts.FirstBoot != nil {
					s.opts.FirstBoot(c.status())
				}
				round.Done()
			})
		}
		s.reconf.Unlock()
		go func() {
			round.Wait()
			// A client that left before the children were up stopped
			// them; "0 tools registered" would read as a broken setup.
			if s.ctx.Err() == nil {
				s.log.Info(MsgBootComplete(s.proxiedCount()))
			}
			close(s.booted)
		}()
	})
}

// SetLogLevel passes a client's logging/setLevel on to every child that
// logs, now and when it boots later. Sessions filter what reaches each
// client by their own level, so the most verbose request wins here.
func (s *Supervisor) SetLogLevel(level mcp.LoggingLevel) {
	if old, ok := s.logLevel.Load().(mcp.LoggingLevel); ok && moreVerbose(old, level) {
		level = old
	}
	s.logLevel.Store(level)
	for _, c := range s.children() {
		c.setLogLevel(level)
	}
}

var levelOrder = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// moreVerbose reports whether a lets through more messages than b.
func moreVerbose(a, b mcp.LoggingLevel) bool {
	return slices.Index(levelOrder, a) < slices.Index(levelOrder, b)
}

// Booted is closed once every child has finished its first boot attempt.
func (s *Supervisor) Booted() <-chan struct{} { return s.booted }

// Close stops every child and waits until their processes are gone.
func (s *Supervisor) Close() {
	s.cancel()
	s.reconf.Lock()
	all := slices.Clone(s.children())
	for c := range s.retiring {
		all = append(all, c)
	}
	s.reconf.Unlock()
	s.closeHeld()
	var wg sync.WaitGroup
	wg.Go(s.closeInstances)
	for _, c := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.shutdown(s.opts.ShutdownGrace)
		}()
	}
	wg.Wait()
	s.wg.Wait()
}

// ServerStatus is one child as proxy_server_status reports it; the type
// lives in package status so its readers need not import the supervisor.
type ServerStatus = status.Server

// Status reports every configured server, sorted by id.
func (s *Supervisor) Status() []ServerStatus {
	children := s.children()
	out := make([]ServerStatus, 0, len(children))
	snap := s.opts.Catalog.Snapshot()
	for _, c := range children {
		st := c.status()
		if c.spec.PerCaller() {
			st.Instances = s.instanceCount(c.spec.ID)
		}
		for _, e := range snap.Entries {
			if e.Server == c.spec.ID && e.Long != "" {
				if st.Shortened == nil {
					st.Shortened = map[string]string{}
				}
				st.Shortened[e.Name] = e.Long
			}
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b ServerStatus) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}

// register publishes a child's tools and logs what happened, in
// EVOKORE-MCP's words.
func (s *Supervisor) register(c *child, tools []*mcp.Tool, announce bool) {
	c.setLastTools(tools)
	if !s.current(c) {
		// A child a reload replaced or removed no longer speaks for its
		// id: its successor's tools, or none, are listed.
		return
	}
	// Each definition is hashed once, for its entry; the pins compare
	// the entries' hashes.
	entries := catalog.PrefixedEntries(c.spec.ID, c.spec.NamePrefix(), tools)
	catalog.DeclareTasks(entries, c.listedSupport())
	if tools != nil {
		if s.opts.Pins != nil && c.spec.PinningEnabled() {
			held, problem := s.opts.Pins.Check(c.spec, entries)
			if problem != "" {
				s.log.Info("[EVOKORE] " + problem) // the pins store's text
			}
			catalog.Hold(entries, held)
		}
		for _, e := range entries {
			if e.Quarantine != "" && announce {
				s.log.Info("[EVOKORE] " + e.Quarantine) // the text a caller of the held tool gets
			}
		}
	}
	reg := s.opts.Catalog.SetServerEntries(c.spec.ID, entries)
	c.setToolCount(reg.Registered)
	if !announce {
		return
	}
	// A list_changed that arrives while the child boots re-lists the same
	// tools: one "Proxied" line per child per boot unless they changed.
	if !c.announce(tools, reg.Registered, len(reg.Skipped)) {
		return
	}
	for _, name := range reg.Skipped {
		s.log.Info(MsgDuplicate(name, c.spec.ID))
	}
	s.log.Info(MsgProxied(c.spec.ID, reg.Registered, len(reg.Skipped)))
	if len(reg.Skipped) > 0 {
		s.log.Info(MsgCollisionSummary(c.spec.ID, len(reg.Skipped)))
	}
	// A server earlier in config order that boots later takes its names
	// back from servers that registered first.
	for _, other := range slices.Sorted(maps.Keys(reg.Displaced)) {
		for _, name := range reg.Displaced[other] {
			s.log.Info(MsgDuplicate(name, other))
		}
		n := s.registeredBy(other)
		if oc, ok := s.child(other); ok {
			oc.setToolCount(n)
		}
		s.log.Info(MsgProxied(other, n, len(reg.Displaced[other])))
		s.log.Info(MsgCollisionSummary(other, len(reg.Displaced[other])))
	}
}

// Readmit registers every child's last tool list again, for example after
// an operator accepted changed tool definitions.
func (s *Supervisor) Readmit() {
	for _, c := range s.children() {
		if tools := c.getLastTools(); tools != nil {
			s.register(c, tools, false)
		}
		if s.hasSkills(c.spec.ID) {
			s.requestContentReload(c) // its skills are pinned again
		}
	}
}

// registeredBy counts the catalog entries a server holds.
func (s *Supervisor) registeredBy(server string) int {
	n := 0
	for _, e := range s.opts.Catalog.Snapshot().Entries {
		if e.Source == catalog.SourceProxy && e.Server == server {
			n++
		}
	}
	return n
}

func (s *Supervisor) proxiedCount() int {
	n := 0
	for _, e := range s.opts.Catalog.Snapshot().Entries {
		if e.Source == catalog.SourceProxy {
			n++
		}
	}
	return n
}

func (s *Supervisor) bootTimeout(spec config.Server) time.Duration {
	if spec.Timeouts.BootMs > 0 {
		return time.Duration(spec.Timeouts.BootMs) * time.Millisecond
	}
	return s.opts.BootTimeout
}

func (s *Supervisor) requestTimeout(spec config.Server) time.Duration {
	if spec.Timeouts.RequestMs > 0 {
		return time.Duration(spec.Timeouts.RequestMs) * time.Millisecond
	}
	return s.opts.RequestTimeout
}

// BootOnce boots every enabled child, waits for the first boot round,
// stops them again and reports how each ended. The manifest cache under
// opts.Home is refreshed on the way, so manifest.Cached then returns what the
// children really serve. `vet --live` and `profile --live` use it.
func BootOnce(opts Options) []ServerStatus {
	if opts.Catalog == nil {
		var ids []string
		for _, s := range opts.Servers {
			ids = append(ids, s.ID)
		}
		opts.Catalog = catalog.NewStore(nil, ids)
	}
	sup := New(opts)
	// Boot as a client with roots would: a child may list more tools for
	// one (server-everything adds get-roots-list), and pins recorded from
	// a shorter list would hold those tools at the first real session.
	sup.Start(&mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}})
	<-sup.Booted()
	st := sup.Status()
	sup.Close()
	return st
}
