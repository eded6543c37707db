package config

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Defaults are the values settings take when no EVOKORE_* variable sets
// them. They come from evokore.cue through the generated tables; config
// only applies them.
type Defaults struct {
	ChildBootTimeout    time.Duration
	ProxyRequestTimeout time.Duration
	SessionTTL          time.Duration
	ShutdownGrace       time.Duration
}

// Discovery modes.
const (
	ModeDynamic = "dynamic"
	ModeLegacy  = "legacy"
)

// ChildTimeouts bound a child's boot, each proxied call and a child's
// stop: what starting children takes, for the router and for vet's and
// doctor's live boots.
type ChildTimeouts struct {
	Boot    time.Duration // EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS
	Request time.Duration // EVOKORE_PROXY_REQUEST_TIMEOUT_MS
	// ShutdownGrace is how long a child may take to stop.
	ShutdownGrace time.Duration
}

// Settings are what the composition root hands out across packages: the
// files and directories evokore reads, the children's timeouts, the
// session lifetime, and the environment every package reads its own
// settings from (records.ReadSettings, policy.ReadSettings,
// catalog.ReadDiscovery, sessionstore.ReadOptions…). Command-line flags
// override the path fields after ReadSettings.
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

	Children   ChildTimeouts
	SessionTTL time.Duration // EVOKORE_SESSION_TTL_MS

	// UntrustedConfig is set when mcp.config.json is the project
	// directory's own (found in the working directory, not named by a
	// flag or the real environment) and the user has not trusted it: its
	// settings may then only make evokore stricter.
	UntrustedConfig bool

	// Env is the environment the settings were read from; children and
	// placeholders resolve against it, and packages read their own
	// settings from it.
	Env Env
}

// ReadSettings reads the variables of Settings from env, and reports the
// variables of evokore's families it does not know. Values it cannot use
// are reported as warnings and replaced by their defaults.
func ReadSettings(env Env, d Defaults) (Settings, []string) {
	v := NewVars(env)
	s := Settings{
		ConfigPath:      v.Path("EVOKORE_MCP_CONFIG_PATH"),
		PermissionsPath: v.Path("EVOKORE_PERMISSIONS_PATH"),
		SkillsDir:       v.Path("EVOKORE_SKILLS_DIR"),
		Home:            v.Path("EVOKORE_HOME"),
		Children: ChildTimeouts{
			Boot:          v.Millis("EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS", d.ChildBootTimeout),
			Request:       v.Millis("EVOKORE_PROXY_REQUEST_TIMEOUT_MS", d.ProxyRequestTimeout),
			ShutdownGrace: d.ShutdownGrace,
		},
		SessionTTL: v.Millis("EVOKORE_SESSION_TTL_MS", d.SessionTTL),
		Env:        env,
	}
	if v.Set("EVOKORE_MCP_CONFIG_PATH") {
		s.ConfigPathFrom = "EVOKORE_MCP_CONFIG_PATH"
	}
	if v.Set("EVOKORE_PERMISSIONS_PATH") {
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
	s.PluginsDir = or(v.Raw("EVOKORE_PLUGINS_DIR"), filepath.Join(s.Home, "plugins"))
	// A relative directory would follow whatever directory the client
	// happened to start evokore in.
	if abs, err := filepath.Abs(s.PluginsDir); err == nil {
		s.PluginsDir = abs
	}
	if d := v.String("EVOKORE_TELEMETRY_DIR"); d != "" {
		s.TelemetryDir = d
		if abs, err := filepath.Abs(d); err == nil {
			s.TelemetryDir = abs
		}
	}
	for _, u := range UnknownVariables(env) {
		v.Warn("[EVOKORE] " + u.Message + ".")
	}
	return s, v.Warnings
}

func or(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return v
}

// DefaultPermissions is the permissions.yml read when no flag or variable
// names one: the project directory's ./permissions.yml when there is one,
// else the user's own in home. project says which it is. This is the one
// rule serve, vet and doctor share, so a typo in the user's file is found
// by the commands that check it, not only by the router that obeys it;
// serve then replaces a project's file the user has not trusted by the
// user's own.
func DefaultPermissions(home string) (path string, project bool) {
	if _, err := os.Stat(DefaultPermissionsPath); err == nil {
		return DefaultPermissionsPath, true
	}
	return filepath.Join(home, DefaultPermissionsPath), false
}
