package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Defaults are the values settings take when no EVOKORE_* variable sets
// them. They come from evokore.cue through the generated tables; config
// only applies them.
type Defaults struct {
	ChildBootTimeout    time.Duration
	ProxyRequestTimeout time.Duration
	Cooldown            time.Duration
	ApprovalTTL         time.Duration
	SessionTTL          time.Duration
	ShutdownGrace       time.Duration
}

// Discovery modes.
const (
	ModeDynamic = "dynamic"
	ModeLegacy  = "legacy"
)

// Schema modes of tools/list.
const (
	SchemaFull     = "full"
	SchemaDeferred = "deferred"
)

// DiscoverySettings choose the discovery profile (catalog.Resolve).
type DiscoverySettings struct {
	// Mode is EVOKORE_TOOL_DISCOVERY_MODE, dynamic or legacy; ModeSet
	// records whether the variable was set at all, which profile
	// precedence needs.
	Mode    string
	ModeSet bool
	Profile string // EVOKORE_DISCOVERY_PROFILE
}

// Settings are the EVOKORE_* variables, parsed, with defaults applied.
// Command-line flags override the path fields after ReadSettings.
type Settings struct {
	ConfigPath      string // EVOKORE_MCP_CONFIG_PATH, default ./mcp.config.json
	PermissionsPath string // EVOKORE_PERMISSIONS_PATH, default ./permissions.yml
	SkillsDir       string // EVOKORE_SKILLS_DIR, default ./SKILLS
	Home            string // EVOKORE_HOME, default ~/.evokore
	PluginsDir      string // EVOKORE_PLUGINS_DIR, default <Home>/plugins
	TelemetryDir    string // EVOKORE_TELEMETRY_DIR; empty means <Home>/telemetry
	// ProjectDir is the working directory evokore started in: the project
	// a client started it for, whose files the file-reading natives may
	// read. Empty when that is the filesystem root (Claude Desktop starts
	// its servers there), which is no project.
	ProjectDir string

	// ConfigPathFrom and PermissionsPathFrom name what chose the path (a
	// variable, or a flag the caller applied), or are empty for the
	// default. A default path may be absent; a chosen one must exist.
	ConfigPathFrom      string
	PermissionsPathFrom string

	// Discovery is what chooses the discovery profile.
	Discovery DiscoverySettings

	Role        string // EVOKORE_ROLE
	DefaultDeny bool   // EVOKORE_SECURITY_DEFAULT_DENY
	// ApprovalMode is EVOKORE_APPROVALS_MODE (auto, operator or token);
	// "" defers to mcp.config.json, then auto.
	ApprovalMode string

	ChildBootTimeout    time.Duration // EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS
	ProxyRequestTimeout time.Duration // EVOKORE_PROXY_REQUEST_TIMEOUT_MS
	Cooldown            time.Duration
	ApprovalTTL         time.Duration
	SessionTTL          time.Duration // EVOKORE_SESSION_TTL_MS
	ShutdownGrace       time.Duration

	Pagination     bool          // EVOKORE_TOOL_LIST_PAGINATION (any true value of ParseBool)
	PageSize       int           // EVOKORE_TOOL_LIST_PAGE_SIZE, default 35, 1..1000
	SchemaMode     string        // EVOKORE_TOOL_SCHEMA_MODE: full or deferred
	SchemaFallback time.Duration // EVOKORE_TOOL_SCHEMA_FALLBACK_MS, default 60 s

	Telemetry        bool // EVOKORE_TELEMETRY
	SkillWatcher     bool // EVOKORE_SKILL_WATCHER
	HTTPAllowPrivate bool // EVOKORE_HTTP_ALLOW_PRIVATE

	// AuditLog is EVOKORE_AUDIT_LOG: on unless set false. AuditMaxBytes
	// (EVOKORE_AUDIT_MAX_BYTES) and AuditKeep (EVOKORE_AUDIT_KEEP) shape
	// its rotation; zero takes the audit package's defaults.
	AuditLog      bool
	AuditMaxBytes int64
	AuditKeep     int
	// Webhooks is EVOKORE_WEBHOOKS_ENABLED: on unless set false, so the
	// webhooks of a trusted mcp.config.json are posted to.
	// WebhooksAllowPrivate is EVOKORE_WEBHOOKS_ALLOW_PRIVATE.
	Webhooks bool
	// SessionReplay is EVOKORE_SESSION_REPLAY: on unless set false, the
	// router records its own sessions under <Home>/sessions.
	SessionReplay        bool
	WebhooksAllowPrivate bool

	// UntrustedConfig is set when mcp.config.json is the project
	// directory's own (found in the working directory, not named by a
	// flag or the real environment) and the user has not trusted it: its
	// settings may then only make evokore stricter.
	UntrustedConfig bool

	// Env is the environment the settings were read from; children and
	// placeholders resolve against it.
	Env Env
}

// ReadSettings parses the EVOKORE_* variables of env. Values it cannot use
// are reported as warnings and replaced by their defaults.
func ReadSettings(env Env, d Defaults) (Settings, []string) {
	var warnings []string
	ms := func(key string, def time.Duration) time.Duration {
		raw, ok := env.Lookup(key)
		if !ok || strings.TrimSpace(raw) == "" {
			return def
		}
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || n <= 0 {
			warnings = append(warnings, "Ignoring "+key+"="+strconv.Quote(raw)+": want a positive number of milliseconds.")
			return def
		}
		return time.Duration(n) * time.Millisecond
	}
	boolean := func(key string) bool {
		raw := env.Get(key)
		v, ok := ParseBool(raw)
		if !ok {
			warnings = append(warnings, "Ignoring "+key+"="+strconv.Quote(raw)+": want 1, true, on or yes (or 0, false, off, no).")
		}
		return v
	}
	// onUnlessFalse reads a boolean whose declared default is true.
	onUnlessFalse := func(key string) bool {
		raw, set := env.Lookup(key)
		if !set || strings.TrimSpace(raw) == "" {
			return true
		}
		return boolean(key)
	}
	positive := func(key string, def int) int {
		raw := strings.TrimSpace(env.Get(key))
		if raw == "" {
			return def
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n <= 0 {
			warnings = append(warnings, "Ignoring "+key+"="+strconv.Quote(raw)+": want a positive number.")
			return def
		}
		return n
	}
	s := Settings{
		ConfigPath:           or(env.Get("EVOKORE_MCP_CONFIG_PATH"), DefaultMCPConfigPath),
		PermissionsPath:      or(env.Get("EVOKORE_PERMISSIONS_PATH"), DefaultPermissionsPath),
		SkillsDir:            or(env.Get("EVOKORE_SKILLS_DIR"), DefaultSkillsDir),
		Home:                 env.Get("EVOKORE_HOME"),
		Discovery:            DiscoverySettings{Profile: strings.TrimSpace(env.Get("EVOKORE_DISCOVERY_PROFILE"))},
		Role:                 strings.TrimSpace(env.Get("EVOKORE_ROLE")),
		DefaultDeny:          boolean("EVOKORE_SECURITY_DEFAULT_DENY"),
		ApprovalMode:         strings.ToLower(strings.TrimSpace(env.Get("EVOKORE_APPROVALS_MODE"))),
		ChildBootTimeout:     ms("EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS", d.ChildBootTimeout),
		ProxyRequestTimeout:  ms("EVOKORE_PROXY_REQUEST_TIMEOUT_MS", d.ProxyRequestTimeout),
		Cooldown:             d.Cooldown,
		ApprovalTTL:          d.ApprovalTTL,
		SessionTTL:           ms("EVOKORE_SESSION_TTL_MS", d.SessionTTL),
		ShutdownGrace:        d.ShutdownGrace,
		Pagination:           boolean("EVOKORE_TOOL_LIST_PAGINATION"),
		PageSize:             DefaultToolListPageSize,
		SchemaMode:           DefaultToolSchemaMode,
		SchemaFallback:       ms("EVOKORE_TOOL_SCHEMA_FALLBACK_MS", DefaultToolSchemaFallback),
		Telemetry:            boolean("EVOKORE_TELEMETRY"),
		SkillWatcher:         boolean("EVOKORE_SKILL_WATCHER"),
		HTTPAllowPrivate:     boolean("EVOKORE_HTTP_ALLOW_PRIVATE"),
		AuditLog:             onUnlessFalse("EVOKORE_AUDIT_LOG"),
		AuditMaxBytes:        int64(positive("EVOKORE_AUDIT_MAX_BYTES", DefaultAuditMaxBytes)),
		AuditKeep:            positive("EVOKORE_AUDIT_KEEP", DefaultAuditKeep),
		Webhooks:             onUnlessFalse("EVOKORE_WEBHOOKS_ENABLED"),
		SessionReplay:        onUnlessFalse("EVOKORE_SESSION_REPLAY"),
		WebhooksAllowPrivate: boolean("EVOKORE_WEBHOOKS_ALLOW_PRIVATE"),
		Env:                  env,
	}
	if strings.TrimSpace(env.Get("EVOKORE_MCP_CONFIG_PATH")) != "" {
		s.ConfigPathFrom = "EVOKORE_MCP_CONFIG_PATH"
	}
	if strings.TrimSpace(env.Get("EVOKORE_PERMISSIONS_PATH")) != "" {
		s.PermissionsPathFrom = "EVOKORE_PERMISSIONS_PATH"
	}
	if wd, err := os.Getwd(); err == nil && filepath.Dir(wd) != wd {
		s.ProjectDir = wd
	}
	if s.Home == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		s.Home = filepath.Join(home, ".evokore")
	}
	s.PluginsDir = or(env.Get("EVOKORE_PLUGINS_DIR"), filepath.Join(s.Home, "plugins"))
	// A relative directory would follow whatever directory the client
	// happened to start evokore in.
	if abs, err := filepath.Abs(s.PluginsDir); err == nil {
		s.PluginsDir = abs
	}
	if d := strings.TrimSpace(env.Get("EVOKORE_TELEMETRY_DIR")); d != "" {
		s.TelemetryDir = d
		if abs, err := filepath.Abs(d); err == nil {
			s.TelemetryDir = abs
		}
	}

	for _, u := range UnknownVariables(env) {
		warnings = append(warnings, "[EVOKORE] "+u.Message+".")
	}

	raw, set := env.Lookup("EVOKORE_TOOL_DISCOVERY_MODE")
	mode := strings.ToLower(strings.TrimSpace(raw))
	s.Discovery.ModeSet = set && mode != ""
	switch mode {
	case "":
		s.Discovery.Mode = DefaultToolDiscoveryMode
	case ModeDynamic:
		s.Discovery.Mode = ModeDynamic
	case ModeLegacy:
		s.Discovery.Mode = ModeLegacy
	default:
		s.Discovery.Mode = ModeDynamic
		warnings = append(warnings, "Unknown EVOKORE_TOOL_DISCOVERY_MODE '"+raw+"'. Falling back to dynamic mode.")
	}

	if raw := strings.TrimSpace(env.Get("EVOKORE_TOOL_LIST_PAGE_SIZE")); raw != "" {
		if n, err := strconv.Atoi(raw); err == nil {
			s.PageSize = min(max(n, 1), 1000)
		} else {
			warnings = append(warnings, "Ignoring EVOKORE_TOOL_LIST_PAGE_SIZE="+strconv.Quote(raw)+": want a number.")
		}
	}
	switch m := strings.ToLower(strings.TrimSpace(env.Get("EVOKORE_TOOL_SCHEMA_MODE"))); m {
	case "", SchemaFull:
	case SchemaDeferred:
		s.SchemaMode = SchemaDeferred
	default:
		warnings = append(warnings, "Unknown EVOKORE_TOOL_SCHEMA_MODE '"+m+"'. Using full schemas.")
	}
	return s, warnings
}

func or(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return v
}
