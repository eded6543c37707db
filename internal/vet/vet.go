package vet

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/policy"
)

// Options say what to check.
type Options struct {
	ConfigPath      string
	PermissionsPath string
	// Env resolves placeholders and EVOKORE_ROLE.
	Env config.Env
	// Strict turns every warning into an error.
	Strict bool
	// Live boots the children (with Settings' home and timeouts) and checks
	// names against the tools they really serve.
	Live     bool
	Settings config.Settings
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
)

// maxToolName is the longest tool name clients accept.
const maxToolName = 64

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Run loads the files and runs every check. The diagnostics are sorted.
func Run(opts Options) config.Diagnostics {
	var ds config.Diagnostics
	cfg, err := config.LoadMCPConfig(opts.ConfigPath)
	if err != nil {
		ds = append(ds, asDiagnostics(opts.ConfigPath, err)...)
	}
	perms, err := config.LoadPermissions(opts.PermissionsPath, policy.ShippedPermissions())
	if err != nil {
		ds = append(ds, asDiagnostics(opts.PermissionsPath, err)...)
	}
	c := checker{cfg: cfg, perms: perms, env: opts.Env}
	if cfg != nil {
		c.servers()
		c.profiles()
	}
	if perms != nil {
		c.permissions()
	}
	if opts.Live && cfg != nil {
		c.live(opts.Settings)
	}
	ds = append(ds, c.out...)
	if opts.Strict {
		for i := range ds {
			ds[i].Severity = config.SeverityError
		}
	}
	ds.Sort()
	return ds
}

func asDiagnostics(file string, err error) config.Diagnostics {
	if ds, ok := err.(config.Diagnostics); ok {
		return ds
	}
	return config.Diagnostics{{Position: config.Position{File: file}, Severity: config.SeverityError, Code: "read", Message: err.Error()}}
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
		pos := c.cfg.KeyPos("servers", s.ID)
		if !validName.MatchString(s.ID) {
			c.report(config.SeverityError, pos, CodeInvalidServerID,
				"server id %q makes tool names clients reject: use only letters, digits, '_' and '-'", s.ID)
		}
		switch {
		case s.IsHTTP() && s.URL == "":
			c.report(config.SeverityError, pos, CodeMissingURL, "HTTP server '%s' requires a 'url' field", s.ID)
		case !s.IsHTTP() && s.Command == "":
			c.report(config.SeverityError, pos, CodeMissingCommand, "Stdio server '%s' requires a 'command' field", s.ID)
		}
		if rl := s.RateLimit; rl != nil && rl.MaxTokens != nil && rl.RequestsPerMinute != nil {
			c.report(config.SeverityWarning, c.cfg.KeyPos("servers", s.ID, "rateLimit"), CodeMixedRateLimit,
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
	if c.perms.Missing {
		return // the shipped permissions are ours and tested
	}
	roles := map[string]bool{}
	for _, r := range c.perms.Roles {
		roles[r.Name] = true
		for tool := range r.Overrides {
			c.toolName(c.perms.KeyPos("roles", r.Name, "overrides", tool), fmt.Sprintf("role '%s'", r.Name), tool)
		}
	}
	for tool := range c.perms.Rules {
		c.toolName(c.perms.KeyPos("rules", tool), "rules", tool)
	}
	names := keys(roles)
	if ar := c.perms.ActiveRole; ar != "" && !roles[ar] {
		c.report(config.SeverityError, c.perms.Pos("active_role"), CodeUnknownRole,
			"active_role '%s' is not defined under roles%s", ar, suggest(ar, names))
	}
	if er := strings.TrimSpace(c.env.Get("EVOKORE_ROLE")); er != "" && !roles[er] {
		c.report(config.SeverityError, config.Position{File: "$EVOKORE_ROLE"}, CodeUnknownRole,
			"EVOKORE_ROLE '%s' is not defined under roles in %s%s", er, c.perms.File, suggest(er, names))
	}
}

// toolName checks a tool name written in a profile, override or rule: it
// must be a name clients accept, and either a native tool or a tool of a
// configured server.
func (c *checker) toolName(pos config.Position, where, name string) {
	if len(name) > maxToolName || !validName.MatchString(name) {
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
// carries. Server ids may contain '_', so the longest matching id wins.
func serverOf(cfg *config.MCPConfig, name string) (string, bool) {
	best := ""
	for _, s := range cfg.Servers {
		if strings.HasPrefix(name, s.ID+"_") && len(s.ID) > len(best) {
			best = s.ID
		}
	}
	return best, best != ""
}

// nearestNative returns the native tool a name most likely misspells, or
// "" when none is close: within a third of its length in edits.
func nearestNative(name string) string {
	best, bestD := "", len(name)/3+1
	for _, s := range native.Specs() {
		if d := levenshtein(name, s.Name); d < bestD {
			best, bestD = s.Name, d
		}
	}
	return best
}

func suggest(name string, options []string) string {
	best, bestD := "", len(name)/3+1
	for _, o := range options {
		if d := levenshtein(name, o); d < bestD {
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

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
