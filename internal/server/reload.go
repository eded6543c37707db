package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/proxy"
)

// generation is one reading of mcp.config.json and permissions.yml, and
// what the router settled from it. It never changes once published: a
// reload builds the next one and publishes it with one atomic store, so a
// reader (a listing, a session being built, the status) sees either the
// old configuration or the new one, never half of each. The parts that
// live elsewhere follow in the same reload: the policy's rules
// (policy.Reload, one atomic store too) and the children
// (proxy.Reconfigure, which publishes the catalog in one snapshot).
type generation struct {
	// number counts the configurations served, from 1.
	number uint64
	// settings are the router's settings with the file paths and the
	// project trust settled for this generation (Options.Settle).
	settings config.Settings
	config   *config.MCPConfig
	perms    *config.Permissions
	profile  catalog.Resolution
	// role is the RBAC role new sessions run under unless their transport
	// says otherwise: EVOKORE_ROLE, else permissions.yml's active_role;
	// "" for none. A session keeps the role it started with.
	role string
	// problems keep this configuration from serving as written; they are
	// shown in evokore://server/status.
	problems []string
	// configSum and permsSum are the digests of the files as read ("" for
	// a file that did not exist): a change on disk that leaves both as
	// they were does not reload.
	configSum, permsSum string
	loaded              time.Time
	// superseded is closed when the next generation is published: session
	// views wait on it to list their tools again.
	superseded chan struct{}
}

// ReloadStatus is what the last reload did, for evokore://server/status
// and the HTTP health details.
type ReloadStatus struct {
	// Generation counts the configurations served since the start, from 1.
	Generation uint64 `json:"generation"`
	// Loaded is when the configuration in force was read.
	Loaded time.Time `json:"loaded"`
	// Refused, when set, is when a reload was refused, and Errors why, at
	// file:line:col. The configuration in force is the one before it.
	Refused *time.Time `json:"refused,omitempty"`
	Errors  []string   `json:"errors,omitempty"`
}

// ReloadReport is what a successful reload changed.
type ReloadReport struct {
	Generation uint64
	Servers    proxy.Change
	// Permissions and Config report whether each file's content changed.
	Permissions, Config bool
	// Read is how long reading and validating the files took; Swap how
	// long diffing the children and publishing the new rules, generation
	// and catalog took (not the children's boot, which follows in the
	// background).
	Read, Swap time.Duration
}

// ErrReloadClosed is returned by Reload once Shutdown began.
var ErrReloadClosed = errors.New("evokore: server is shutting down; not reloading")

// Config returns the mcp.config.json in force.
func (s *Server) Config() *config.MCPConfig { return s.gen.Load().config }

// Reload reads mcp.config.json and permissions.yml again and, when both
// are valid, switches the router to them; SIGHUP and the file watcher
// call it. The files go through the same loading and CUE validation as
// at start, and stricter: a problem anywhere, one server's definition
// included, refuses the whole reload, reported on stderr at file:line:col
// and in the status, and the configuration in force keeps serving
// untouched. A file that was there and is gone is refused too: deleting
// mcp.config.json must not stop every child, nor deleting permissions.yml
// fall back to the shipped rules.
//
// On success the policy's rules, the profile and the role new sessions
// get are replaced atomically; children are added, removed and restarted
// by proxy.Reconfigure, unchanged ones left running; each session is told
// tools/list_changed when what it lists changed. Calls in flight finish:
// a call to a kept child is not touched, a call to a removed or replaced
// one is answered before that child is stopped.
//
// What a reload does not change, because only a restart reads it: the
// environment and .env, EVOKORE_* settings and flags, discovery
// embeddings, the role of a session already connected.
func (s *Server) Reload() (ReloadReport, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	if s.isClosing() {
		return ReloadReport{}, ErrReloadClosed
	}
	old := s.gen.Load()
	settings := s.opts.Settings
	if s.opts.Settle != nil {
		var notes []string
		settings, notes = s.opts.Settle(settings)
		for _, n := range notes {
			s.log.Info(n)
		}
	}
	began := time.Now()
	g := &generation{number: old.number + 1, settings: settings, loaded: began, superseded: make(chan struct{})}
	ds := readFiles(old, g)
	if !ds.HasErrors() {
		// The role sessions would run under must exist: at start an
		// undefined one fails closed; a reload keeps what serves instead.
		role := s.settings.Policy.SessionRole(g.perms)
		if role != "" && !policy.NewRBAC(g.perms, false).HasRole(role) {
			at := config.Position{File: g.perms.File}
			if s.settings.Policy.Role == "" {
				at = g.perms.Pos("active_role")
			}
			ds = append(ds, config.Diagnostic{Position: at, Severity: config.SeverityError, Code: "undefined-role",
				Message: fmt.Sprintf("role %q is not defined in %s: sessions would be refused every tool but the read-only natives", role, g.perms.File)})
		}
	}
	if ds.HasErrors() {
		s.refuse(ds)
		s.records.Reload("reload refused, the previous configuration keeps serving", ds)
		return ReloadReport{}, ds
	}

	read := time.Since(began)
	swapping := time.Now()
	po := s.policyOptions(g, false)
	s.policy.Reload(po)
	s.settle(g, s.policy.Rules().RBAC, false)
	g.profile = s.resolveProfile(g)
	if !sameEmbeddings(old.config.Discovery.Embeddings, g.config.Discovery.Embeddings) {
		s.log.Info("[EVOKORE] discovery.embeddings changed in mcp.config.json; semantic search keeps its settings until evokore restarts.")
	}
	if g.role != old.role {
		s.log.Info("[EVOKORE] New sessions run under a new role; sessions already connected keep theirs", "role", g.role, "previous", old.role)
	}
	s.gen.Store(g)
	close(old.superseded)
	change := s.proxy.Reconfigure(g.config.Servers)
	s.refused.Store(nil)

	rep := ReloadReport{Generation: g.number, Servers: change, Config: g.configSum != old.configSum, Permissions: g.permsSum != old.permsSum,
		Read: read, Swap: time.Since(swapping)}
	s.log.Info(reloadSummary(rep))
	s.records.LearnSecrets(g.config, settings.Env)
	s.records.Reload(reloadSummary(rep), nil)
	return rep, nil
}

// refuse records and reports a reload that did not happen.
func (s *Server) refuse(ds config.Diagnostics) {
	var lines []string
	for _, d := range ds {
		if d.Severity == config.SeverityError {
			lines = append(lines, d.String())
		}
	}
	now := time.Now()
	s.refused.Store(&ReloadStatus{Refused: &now, Errors: lines})
	s.log.Info("[EVOKORE] Reload refused; the running configuration keeps serving. Fix these and save again (or send SIGHUP):\n" + strings.Join(lines, "\n"))
}

// ReloadStatus reports the configuration in force and the last refused
// reload since it was loaded.
func (s *Server) ReloadStatus() ReloadStatus {
	g := s.gen.Load()
	st := ReloadStatus{Generation: g.number, Loaded: g.loaded}
	if r := s.refused.Load(); r != nil {
		st.Refused, st.Errors = r.Refused, r.Errors
	}
	return st
}

// Problems are what keeps the router from serving as configured: those of
// the configuration in force, then a refused reload's errors. The status
// resource and the HTTP health details show them.
func (s *Server) Problems() []string {
	out := append([]string(nil), s.gen.Load().problems...)
	if p := s.sharedProblem.Load(); p != nil {
		out = append(out, *p)
	}
	if r := s.refused.Load(); r != nil {
		for _, e := range r.Errors {
			out = append(out, "reload refused, the previous configuration keeps serving: "+e)
		}
	}
	return out
}

// readFiles reads both files into g. The files are hostile input read
// again and again while the router serves: a panic while reading them
// refuses the reload instead of ending the router.
func readFiles(old, g *generation) (ds config.Diagnostics) {
	defer func() {
		if v := recover(); v != nil {
			ds = config.Diagnostics{{Position: config.Position{File: g.settings.ConfigPath}, Severity: config.SeverityError, Code: "internal",
				Message: fmt.Sprintf("reading the configuration failed: %v", v)}}
		}
	}()
	g.config, g.configSum, ds = readConfig(old, g.settings.ConfigPath)
	perms, sum, pds := readPermissions(old, g.settings.PermissionsPath)
	g.perms, g.permsSum = perms, sum
	return append(ds, pds...)
}

// readConfig reads and validates mcp.config.json for a reload. Any error,
// one server's included, refuses it.
func readConfig(old *generation, path string) (*config.MCPConfig, string, config.Diagnostics) {
	src, err := config.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if old.config.Missing || old.settings.ConfigPath != path {
			return &config.MCPConfig{File: path, Missing: true}, "", nil
		}
		return nil, "", config.Diagnostics{removed(path, "remove every child with {\"servers\": {}} instead")}
	}
	if err != nil {
		return nil, "", config.Diagnostics{config.ReadProblem(path, err)}
	}
	cfg, ds := config.ParseMCPConfig(path, src)
	if ds != nil {
		return nil, "", ds
	}
	if cfg.ServerProblems.HasErrors() {
		return nil, "", cfg.ServerProblems
	}
	return cfg, sum(src), nil
}

// readPermissions reads and validates permissions.yml for a reload. A
// path no file was read from before may be absent: the shipped rules
// apply there, as at start.
func readPermissions(old *generation, path string) (*config.Permissions, string, config.Diagnostics) {
	src, err := config.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if old.perms.Missing || old.settings.PermissionsPath != path {
			shipped := policy.ShippedPermissions()
			shipped.File, shipped.Missing = path, true
			return &shipped, "", nil
		}
		return nil, "", config.Diagnostics{removed(path, "the shipped rules would replace yours")}
	}
	if err != nil {
		return nil, "", config.Diagnostics{config.ReadProblem(path, err)}
	}
	p, ds := config.ParsePermissions(path, src)
	if ds != nil {
		return nil, "", ds
	}
	return p, sum(src), nil
}

func removed(path, why string) config.Diagnostic {
	return config.Diagnostic{Position: config.Position{File: path}, Severity: config.SeverityError, Code: "removed",
		Message: "the file was removed; " + why}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// fileSum is the digest of a file's content, "" when it cannot be read.
func fileSum(path string) string {
	b, err := config.ReadFile(path)
	if err != nil {
		return ""
	}
	return sum(b)
}

func sameEmbeddings(a, b *config.Embeddings) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// reloadSummary is the stderr line of a successful reload.
func reloadSummary(r ReloadReport) string {
	var parts []string
	add := func(verb string, ids []string) {
		if len(ids) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", verb, strings.Join(ids, ", ")))
		}
	}
	add("started", r.Servers.Added)
	add("stopped", r.Servers.Removed)
	add("restarted", r.Servers.Restarted)
	if n := len(r.Servers.Kept); n > 0 {
		parts = append(parts, fmt.Sprintf("%d kept running", n))
	}
	if len(parts) == 0 {
		parts = append(parts, "no server changed")
	}
	return fmt.Sprintf("[EVOKORE] Configuration reloaded (generation %d): %s.", r.Generation, strings.Join(parts, "; "))
}

// Role is the RBAC role new sessions run under unless their transport
// says otherwise ("" for none): the role a static HTTP token has.
func (s *Server) Role() string { return s.gen.Load().role }
