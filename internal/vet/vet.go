package vet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/proxy"
)

// Options say what to check.
type Options struct {
	ConfigPath      string
	PermissionsPath string
	// Env resolves placeholders and EVOKORE_ROLE.
	Env config.Env
	// Strict turns every warning into an error.
	Strict bool
	// Live boots the children (under Home, within Children's timeouts)
	// and checks names against the tools they really serve.
	Live bool
	// Booted, with Live, is told each child's status as its first boot
	// ends, one at a time, so a slow child does not keep the others'
	// outcome from the user until it is done.
	Booted func(proxy.ServerStatus)
	// Home holds the tool-list cache the prefix check reads.
	Home     string
	Children config.ChildTimeouts
	// ConfigFrom and PermissionsFrom name the flag or variable that chose
	// each path ("" for the default): a chosen path must exist.
	ConfigFrom, PermissionsFrom string
}

// Diagnostic codes, stable for scripts.
const (
	CodeMissingCommand   = "missing-command"
	CodeMissingURL       = "missing-url"
	CodeInvalidServerID  = "invalid-server-id"
	CodeInvalidToolName  = "invalid-tool-name"
	CodeUnknownNative    = "unknown-native-tool"
	CodeUnknownServer    = "unknown-server"
	CodeUnknownRole      = "unknown-role"
	CodeUnknownProfile   = "unknown-profile"
	CodeUnsetPlaceholder = "unset-placeholder"
	CodeMixedRateLimit   = "mixed-rate-limit"
	CodeBootFailed       = "boot-failed"
	CodeUnknownTool      = "unknown-tool"
	CodeCollision        = "name-collision"
	CodeMissingFile      = "missing-file"
	CodeUnknownVariable  = "unknown-variable"
	CodeSelfReference    = "self-reference"
	CodeOAuth            = "oauth"
	CodeScopeRoots       = "scope-roots"
	CodeSharedSubjectEnv = "shared-subject-env"
)

// maxToolName is the longest tool name clients accept.
const maxToolName = 64

var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// Run loads the files and runs every check. The diagnostics are sorted.
func Run(opts Options) config.Diagnostics {
	ds, _ := RunReport(opts)
	return ds
}

// RunReport is Run that also says which files it read, one line each, so
// a user can tell which file vet judged (and which was absent).
func RunReport(opts Options) (config.Diagnostics, []string) {
	var ds config.Diagnostics
	var files []string
	ds = append(ds, chosenMissing(opts.ConfigPath, opts.ConfigFrom)...)
	ds = append(ds, chosenMissing(opts.PermissionsPath, opts.PermissionsFrom)...)
	// Every part that decoded is checked, whatever is wrong elsewhere, so
	// one run tells the whole truth.
	cfg, cds := config.CheckMCPConfig(opts.ConfigPath)
	ds = append(ds, cds...)
	perms, pds := config.CheckPermissions(opts.PermissionsPath, policy.ShippedPermissions())
	ds = append(ds, pds...)
	files = append(files, describeFile("mcp.config.json", opts.ConfigPath, cfg != nil && cfg.Missing, opts.ConfigFrom, "no child servers"))
	files = append(files, describeFile("permissions.yml", opts.PermissionsPath, perms != nil && perms.Missing, opts.PermissionsFrom, "the shipped roles and rules apply"))
	c := checker{cfg: cfg, perms: perms, env: opts.Env}
	if cfg != nil {
		c.servers()
		c.profiles()
	}
	if perms != nil {
		c.permissions()
	}
	c.variables()
	if opts.Live && cfg != nil {
		c.live(opts.Home, opts.Children, opts.Booted)
	}
	if cfg != nil {
		// After a live boot, which refreshed the cached tool lists.
		c.prefixes(opts.Home)
	}
	ds = append(ds, c.out...)
	if opts.Strict {
		for i := range ds {
			ds[i].Severity = config.SeverityError
		}
	}
	ds.Sort()
	return ds, files
}

// chosenMissing reports a path a flag or variable named that does not
// exist: only the default paths may be absent, or a typo in a path would
// silently run with no children or the shipped policy.
func chosenMissing(path, from string) config.Diagnostics {
	if from == "" {
		return nil
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return config.Diagnostics{{Position: config.Position{File: path}, Severity: config.SeverityError, Code: CodeMissingFile,
		Message: fmt.Sprintf("%s names %s, which does not exist (only the default paths may be absent)", from, path)}}
}

// describeFile is the line saying which file vet read. A missing file
// says so first: a chosen one is an error (chosenMissing), a default one
// only means the default applies.
func describeFile(kind, path string, missing bool, from, absent string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	switch {
	case missing && from != "":
		return fmt.Sprintf("%s: %s does not exist (%s names it)", kind, path, from)
	case missing:
		return fmt.Sprintf("%s: %s does not exist, so %s", kind, path, absent)
	}
	return fmt.Sprintf("%s: %s", kind, path)
}

type checker struct {
	cfg   *config.MCPConfig
	perms *config.Permissions
	env   config.Env
	out   config.Diagnostics
	// served, after a live boot, holds each booted server's tool names.
	served map[string]map[string]bool
}

func (c *checker) report(sev config.Severity, pos config.Position, code, format string, args ...any) {
	c.out = append(c.out, config.Diagnostic{Position: pos, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) servers() {
	for _, s := range c.cfg.Servers {
		pos := c.cfg.KeyPos(s.Path()...)
		if !validName().MatchString(s.ID) {
			c.report(config.SeverityError, pos, CodeInvalidServerID,
				"server id %q makes tool names clients reject: use only letters, digits, '_' and '-'", s.ID)
		}
		// "<id>_" plus a one-letter tool name is the shortest name the
		// server can publish.
		if len(s.ID)+2 > maxToolName {
			c.report(config.SeverityError, pos, CodeInvalidServerID,
				"server id '%s' is %d characters: every tool name it publishes ('%s_<tool>') passes the %d characters clients accept; use a shorter id",
				s.ID, len(s.ID), s.ID, maxToolName)
		}
		if s.Invalid != "" {
			continue // its problems are reported where they were written
		}
		switch {
		case s.IsHTTP() && s.URL == "":
			c.report(config.SeverityError, pos, CodeMissingURL, "HTTP server '%s' requires a 'url' field", s.ID)
		case !s.IsHTTP() && s.Command == "":
			c.report(config.SeverityError, pos, CodeMissingCommand, "Stdio server '%s' requires a 'command' field", s.ID)
		}
		c.oauth(s)
		if s.PerCaller() && len(s.Roots) > 0 {
			c.report(config.SeverityWarning, c.cfg.KeyPos(append(s.Path(), "roots")...), CodeScopeRoots,
				"server '%s' has scope %q: each instance is told its own caller's roots, so its configured roots are never used by a call", s.ID, s.InstanceScope())
		}
		if !s.PerCaller() && len(s.SubjectEnv) > 0 {
			c.report(config.SeverityWarning, c.cfg.KeyPos(append(s.Path(), "subjectEnv")...), CodeSharedSubjectEnv,
				"server '%s' is shared by every caller: subjectEnv gives a caller's instance its values, and this server has none, so its placeholders are empty; give it scope \"subject\"", s.ID)
		}
		if rl := s.RateLimit; rl != nil && rl.MaxTokens != nil && rl.RequestsPerMinute != nil {
			c.report(config.SeverityWarning, c.cfg.KeyPos(append(s.Path(), "rateLimit")...), CodeMixedRateLimit,
				"servers.%s.rateLimit sets both maxTokens and requestsPerMinute; maxTokens is used", s.ID)
		}
		if s.Disabled {
			continue // a disabled server's placeholders are never resolved
		}
		for _, p := range s.Placeholders() {
			if _, ok := c.env.Lookup(p.Var); !ok {
				c.report(config.SeverityWarning, c.cfg.Pos(p.Path...), CodeUnsetPlaceholder,
					"${%s} is not set here: server '%s' will fail to boot (key '%s')", p.Var, s.ID, p.Key)
			}
		}
		// Only the command counts here: the depth mark is about the
		// process that serves, not the file.
		var self *config.SelfReferenceError
		if _, err := s.Resolve(c.env.With(map[string]string{config.DepthVar: ""})); errors.As(err, &self) {
			c.report(config.SeverityError, c.cfg.Pos(append(s.Path(), "command")...), CodeSelfReference, "%v", err)
		}
	}
}

// oauth checks what the schema cannot say of a server's oauth block:
// settings that go together, and a block no transport uses.
func (c *checker) oauth(s config.Server) {
	o := s.OAuth
	if o == nil {
		return
	}
	at := func(key string) config.Position { return c.cfg.KeyPos(append(s.Path(), "oauth", key)...) }
	switch {
	case !s.IsHTTP():
		c.report(config.SeverityWarning, at(""), CodeOAuth, "server '%s' is a stdio server: its oauth settings are not used", s.ID)
	case o.Grant == config.GrantClientCredentials && (o.ClientID == "" || (o.ClientSecret == "") == (o.PrivateKey == "")):
		c.report(config.SeverityError, at("grant"), CodeOAuth,
			"server '%s': the client credentials grant needs oauth.clientId and one of oauth.clientSecret or oauth.privateKey", s.ID)
	case o.Grant == config.GrantTokenExchange && !s.PerCaller():
		c.report(config.SeverityError, at("grant"), CodeOAuth,
			"server '%s': token exchange trades each caller's own token, and a shared child has one for everyone; set its scope to \"subject\"", s.ID)
	case o.Grant == config.GrantTokenExchange && (o.ClientID == "" || o.ClientSecret == ""):
		c.report(config.SeverityError, at("grant"), CodeOAuth,
			"server '%s': token exchange needs oauth.clientId and oauth.clientSecret, the client evokore exchanges as", s.ID)
	case o.Grant != config.GrantClientCredentials && o.PrivateKey != "":
		c.report(config.SeverityError, at("privateKey"), CodeOAuth,
			"server '%s': oauth.privateKey signs client credentials; set oauth.grant to \"client_credentials\"", s.ID)
	case o.ClientSecret != "" && o.ClientID == "":
		c.report(config.SeverityError, at("clientSecret"), CodeOAuth, "server '%s': oauth.clientSecret needs the oauth.clientId it belongs to", s.ID)
	}
}

func (c *checker) profiles() {
	known := map[string]bool{}
	for _, p := range catalog.ShippedProfiles() {
		known[p.Name] = true
	}
	for _, p := range c.cfg.Discovery.Profiles {
		known[p.Name] = true
		for i, name := range p.AlwaysVisible.Names {
			c.toolName(c.cfg.Pos("discovery", "profiles", p.Name, "alwaysVisible", fmt.Sprint(i)),
				fmt.Sprintf("profile '%s'", p.Name), name)
		}
	}
	if ap := c.cfg.Discovery.ActiveProfile; ap != "" && !known[ap] {
		c.report(config.SeverityError, c.cfg.Pos("discovery", "activeProfile"), CodeUnknownProfile,
			"activeProfile '%s' is not a shipped or configured profile%s", ap, suggest(ap, keys(known)))
	}
}

func (c *checker) permissions() {
	roles := map[string]bool{}
	for _, r := range c.perms.Roles {
		roles[r.Name] = true
	}
	names := keys(roles)
	// The shipped roles count too: a role EVOKORE_ROLE names that no
	// roles list defines leaves the session with no role at all.
	if er := strings.TrimSpace(c.env.Get("EVOKORE_ROLE")); er != "" && !roles[er] {
		where := "in " + c.perms.File
		if c.perms.Missing {
			where = "among the shipped roles (" + strings.Join(sorted(names), ", ") + ")"
		}
		c.report(config.SeverityError, config.Position{File: "$EVOKORE_ROLE"}, CodeUnknownRole,
			"EVOKORE_ROLE '%s' is not defined under roles %s%s", er, where, suggest(er, names))
	}
	if c.perms.Missing {
		return // the shipped permissions are ours and tested
	}
	for _, r := range c.perms.Roles {
		for tool := range r.Overrides {
			c.toolName(c.perms.KeyPos("roles", r.Name, "overrides", tool), fmt.Sprintf("role '%s'", r.Name), tool)
		}
	}
	for tool := range c.perms.Rules {
		c.toolName(c.perms.KeyPos("rules", tool), "rules", tool)
	}
	if ar := c.perms.ActiveRole; ar != "" && !roles[ar] {
		c.report(config.SeverityError, c.perms.Pos("active_role"), CodeUnknownRole,
			"active_role '%s' is not defined under roles%s", ar, suggest(ar, names))
	}
}

// variables warns about EVOKORE_* and VOICE_SIDECAR_* variables that have
// no effect, such as EVOKORE-MCP settings evokore does not honour.
func (c *checker) variables() {
	for _, u := range config.UnknownVariables(c.env) {
		c.report(config.SeverityWarning, config.Position{File: "$" + u.Name}, CodeUnknownVariable, "%s", u.Message)
	}
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// toolName checks a tool name written in a profile, override or rule: it
// must be a name clients accept, and either a native tool or a tool of a
// configured server.
func (c *checker) toolName(pos config.Position, where, name string) {
	if len(name) > maxToolName || !validName().MatchString(name) {
		c.report(config.SeverityError, pos, CodeInvalidToolName,
			"%s names '%s': tool names must be 1-%d letters, digits, '_' or '-'", where, name, maxToolName)
		return
	}
	if _, ok := native.Lookup(name); ok {
		return
	}
	if c.cfg != nil {
		if _, ok := serverOf(c.cfg, name); ok {
			return
		}
	}
	if near := nearestNative(name); near != "" {
		c.report(config.SeverityError, pos, CodeUnknownNative,
			"%s names '%s', which is not a native tool (did you mean '%s'?)", where, name, near)
		return
	}
	server, _, _ := strings.Cut(name, "_")
	c.report(config.SeverityWarning, pos, CodeUnknownServer,
		"%s names '%s', but no server '%s' is configured", where, name, server)
}

// serverOf returns the configured server whose prefix the proxied name
// carries. Prefixes may contain '_', so the longest matching one wins; a
// server without a prefix owns no name by its shape.
func serverOf(cfg *config.MCPConfig, name string) (string, bool) {
	best, bestLen := "", 0
	for _, s := range cfg.Servers {
		p := s.NamePrefix()
		if p != "" && strings.HasPrefix(name, p) && len(p) > bestLen {
			best, bestLen = s.ID, len(p)
		}
	}
	return best, best != ""
}

// nearestNative returns the native tool a name most likely misspells, or
// "" when none is close: within a third of its length in edits.
func nearestNative(name string) string {
	best, bestD := "", len(name)/3+1
	for _, s := range native.Specs() {
		if d := config.EditDistance(name, s.Name); d < bestD {
			best, bestD = s.Name, d
		}
	}
	return best
}

func suggest(name string, options []string) string {
	best, bestD := "", len(name)/3+1
	for _, o := range options {
		if d := config.EditDistance(name, o); d < bestD {
			best, bestD = o, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean '%s'?)", best)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
