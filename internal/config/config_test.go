package config_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/config"
)

func parseConfig(t *testing.T, src string) *config.MCPConfig {
	t.Helper()
	cfg, ds := config.ParseMCPConfig("mcp.config.json", []byte(src))
	if ds != nil {
		t.Fatalf("ParseMCPConfig: unexpected diagnostics:\n%v", ds)
	}
	if cfg == nil {
		t.Fatal("ParseMCPConfig returned neither a config nor diagnostics")
	}
	return cfg
}

func TestParseMCPConfigKeepsFileOrder(t *testing.T) {
	cfg := parseConfig(t, `{
  "servers": {
    "zeta":  {"command": "z"},
    "alpha": {"command": "a", "transport": "stdio"},
    "mid":   {"transport": "http", "url": "https://mcp.example.com/mcp"},
    "beta":  {"command": "b", "disabled": true}
  },
  "discovery": {
    "activeProfile": "second",
    "profiles": {
      "second": {"alwaysVisible": ["search_skills"]},
      "first":  {"alwaysVisible": "all"},
      "third":  {}
    }
  }
}`)
	var ids []string
	for _, s := range cfg.Servers {
		ids = append(ids, s.ID)
	}
	if want := []string{"zeta", "alpha", "mid", "beta"}; !slices.Equal(ids, want) {
		t.Errorf("server order %v, want %v", ids, want)
	}
	var profiles []string
	for _, p := range cfg.Discovery.Profiles {
		profiles = append(profiles, p.Name)
	}
	if want := []string{"second", "first", "third"}; !slices.Equal(profiles, want) {
		t.Errorf("profile order %v, want %v", profiles, want)
	}
	if cfg.Discovery.ActiveProfile != "second" {
		t.Errorf("activeProfile %q", cfg.Discovery.ActiveProfile)
	}

	// Transport defaults to stdio; http stays http.
	for id, want := range map[string]string{"zeta": "stdio", "alpha": "stdio", "mid": "http", "beta": "stdio"} {
		s, ok := cfg.Server(id)
		if !ok {
			t.Fatalf("Server(%q) not found", id)
		}
		if s.Transport != want {
			t.Errorf("%s: transport %q, want %q", id, s.Transport, want)
		}
		if s.IsHTTP() != (want == "http") {
			t.Errorf("%s: IsHTTP() = %v", id, s.IsHTTP())
		}
	}
	if s, _ := cfg.Server("beta"); !s.Disabled {
		t.Error("beta: disabled not decoded")
	}
	if _, ok := cfg.Server("gamma"); ok {
		t.Error("Server(gamma) found a server that does not exist")
	}

	// Profiles: the keyword forms, the list form, and the default.
	vis := map[string]config.Visibility{}
	for _, p := range cfg.Discovery.Profiles {
		vis[p.Name] = p.AlwaysVisible
	}
	if v := vis["second"]; v.Mode != config.VisibleList || !slices.Equal(v.Names, []string{"search_skills"}) {
		t.Errorf("second: %+v", v)
	}
	if v := vis["first"]; v.Mode != config.VisibleAll {
		t.Errorf("first: %+v", v)
	}
	if v := vis["third"]; v.Mode != config.VisibleAllNative {
		t.Errorf("third (no alwaysVisible): %+v, want the all-native default", v)
	}
}

func TestParseMCPConfigEmptyAndMissing(t *testing.T) {
	cfg := parseConfig(t, `{}`)
	if len(cfg.Servers) != 0 || cfg.Missing {
		t.Errorf("empty object: %+v", cfg)
	}

	dir := t.TempDir()
	missing, err := config.LoadMCPConfig(filepath.Join(dir, "mcp.config.json"))
	if err != nil {
		t.Fatalf("LoadMCPConfig of a missing file: %v", err)
	}
	if !missing.Missing || len(missing.Servers) != 0 {
		t.Errorf("missing file: %+v", missing)
	}
}

func TestParseMCPConfigPositions(t *testing.T) {
	src := "{\n  \"servers\": {\n    \"fs\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"pkg\"]\n    }\n  }\n}\n"
	cfg := parseConfig(t, src)
	// The second argument "pkg" starts at line 5, column 22 (its quote).
	if got := cfg.Pos("servers", "fs", "args", "1"); got.Line != 5 || got.Col != 22 {
		t.Errorf("Pos(args[1]) = %v, want line 5 col 22", got)
	}
	// A path that was not written falls back to its closest written parent.
	if got, want := cfg.Pos("servers", "fs", "cwd"), cfg.Pos("servers", "fs"); got != want || got.Line != 3 {
		t.Errorf("Pos(cwd) = %v, want the server's position %v on line 3", got, want)
	}
}

func TestParseMCPConfigDiagnostics(t *testing.T) {
	for name, tc := range map[string]struct {
		src  string
		line int
		frag string
	}{
		"syntax":    {"{\n  \"servers\": {,}\n}", 2, "invalid JSON"},
		"top-level": {"{\n  \"server\": {}\n}", 2, "field not allowed"},
		"section":   {"{\n  \"servers\": {\"a\": {\"command\": \"x\"}},\n  \"approvals\": {\"mode\": \"tokn\"}\n}", 3, "approvals.mode"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, ds := config.ParseMCPConfig("c.json", []byte(tc.src))
			if cfg != nil || len(ds) == 0 || !ds.HasErrors() {
				t.Fatalf("want errors and no config, got cfg=%v ds=%v", cfg, ds)
			}
			if ds[0].File != "c.json" || ds[0].Line != tc.line || !strings.Contains(ds[0].Message, tc.frag) {
				t.Errorf("got %v, want c.json:%d and %q", ds[0], tc.line, tc.frag)
			}
		})
	}
}

func TestRateLimitForms(t *testing.T) {
	cfg := parseConfig(t, `{
  "servers": {
    "rpm": {"command": "x", "rateLimit": {"requestsPerMinute": 60}},
    "bucket": {"command": "x", "rateLimit": {"maxTokens": 10, "refillRate": 2, "refillIntervalMs": 500}},
    "bucketDefaults": {"command": "x", "rateLimit": {"maxTokens": 5}},
    "slow": {"command": "x", "rateLimit": {"requestsPerMinute": 0.5}},
    "off": {"command": "x", "rateLimit": {"requestsPerMinute": 0}},
    "tools": {"command": "x", "rateLimit": {"toolLimits": {
      "create_issue": 30,
      "push_files": {"maxTokens": 3, "refillRate": 1, "refillIntervalMs": 2000},
      "search": {"maxTokens": 7},
      "unlimited": 0
    }}},
    "none": {"command": "x"}
  }
}`)
	server := func(id string) *config.Server {
		s, ok := cfg.Server(id)
		if !ok {
			t.Fatalf("no server %q", id)
		}
		return s
	}
	for id, want := range map[string]config.Rate{
		"rpm":            {Burst: 60, PerSecond: 1},
		"bucket":         {Burst: 10, PerSecond: 4},
		"bucketDefaults": {Burst: 5, PerSecond: 1},
		"slow":           {Burst: 1, PerSecond: 0.5 / 60},
		"off":            {},
		"tools":          {},
		"none":           {},
	} {
		if got := server(id).RateLimit.ServerRate(); got != want {
			t.Errorf("%s: ServerRate() = %+v, want %+v", id, got, want)
		}
	}

	want := map[string]config.Rate{
		"create_issue": {Burst: 30, PerSecond: 0.5},
		"push_files":   {Burst: 3, PerSecond: 0.5},
		"search":       {Burst: 7, PerSecond: 1},
	}
	if got := server("tools").RateLimit.ToolRates(); !maps.Equal(got, want) {
		t.Errorf("ToolRates() = %+v, want %+v", got, want)
	}
	if got := server("rpm").RateLimit.ToolRates(); got != nil {
		t.Errorf("rpm: ToolRates() = %+v, want nil", got)
	}
	if server("none").RateLimit != nil {
		t.Error("none: RateLimit should be nil")
	}

	// toolLimits round-trip in the form they were written.
	b, err := json.Marshal(server("tools").RateLimit.ToolLimits)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back["create_issue"] != 30.0 {
		t.Errorf("create_issue marshals as %v", back["create_issue"])
	}
	if m, ok := back["push_files"].(map[string]any); !ok || m["maxTokens"] != 3.0 {
		t.Errorf("push_files marshals as %v", back["push_files"])
	}
}

func TestRateLimitRejectsMisspelling(t *testing.T) {
	cfg := parseConfig(t, `{"servers": {"a": {"command": "x", "rateLimit": {"requestPerMinute": 60}}}}`)
	if ds := cfg.ServerProblems; !ds.HasErrors() || !strings.Contains(ds.Error(), "requestPerMinute") {
		t.Errorf("want an error naming requestPerMinute, got %v", ds)
	}
	if s, _ := cfg.Server("a"); !strings.Contains(s.Invalid, "requestPerMinute") {
		t.Errorf("server a is not failed by the misspelling: %+v", s)
	}
}

func TestParsePermissions(t *testing.T) {
	for name, src := range map[string]string{
		"empty":         "",
		"blank":         "\n  \n",
		"comments only": "# nothing yet\n",
		"null":          "null\n",
		"null role":     "active_role: null\n",
		"tilde role":    "active_role: ~\n",
	} {
		t.Run(name, func(t *testing.T) {
			p, ds := config.ParsePermissions("permissions.yml", []byte(src))
			if ds != nil {
				t.Fatalf("unexpected diagnostics: %v", ds)
			}
			if p == nil {
				t.Fatal("nil permissions without diagnostics")
			}
			if len(p.Roles) != 0 || len(p.Rules) != 0 || p.ActiveRole != "" || p.Missing {
				t.Errorf("got %+v, want no roles, no rules, no active role", p)
			}
		})
	}

	p, ds := config.ParsePermissions("permissions.yml", []byte(`
roles:
  zed:
    default_permission: deny
  admin:
    description: everything
    default_permission: allow
  dev:
    default_permission: require_approval
    overrides:
      fs_read_file: allow
active_role: dev
rules:
  fs_write_file: require_approval
  supabase_delete_branch: deny
`))
	if ds != nil {
		t.Fatalf("unexpected diagnostics: %v", ds)
	}
	var names []string
	for _, r := range p.Roles {
		names = append(names, r.Name)
	}
	if want := []string{"zed", "admin", "dev"}; !slices.Equal(names, want) {
		t.Errorf("role order %v, want %v", names, want)
	}
	if p.ActiveRole != "dev" {
		t.Errorf("active role %q", p.ActiveRole)
	}
	dev, ok := p.Role("dev")
	if !ok || dev.DefaultPermission != config.LevelRequireApproval || dev.Overrides["fs_read_file"] != config.LevelAllow {
		t.Errorf("dev: %+v", dev)
	}
	if want := map[string]string{"fs_write_file": "require_approval", "supabase_delete_branch": "deny"}; !maps.Equal(p.Rules, want) {
		t.Errorf("rules %v, want %v", p.Rules, want)
	}
	if pos := p.KeyPos("rules", "supabase_delete_branch"); pos.Line != 15 || pos.Col != 3 {
		t.Errorf("KeyPos(rule) = %v, want line 15 col 3", pos)
	}
	if pos := p.Pos("rules", "supabase_delete_branch"); pos.Line != 15 || pos.Col != 27 {
		t.Errorf("Pos(rule) = %v, want the value at line 15 col 27", pos)
	}

	for name, src := range map[string]string{
		"empty role":  "active_role: \"\"\n",
		"bad level":   "rules:\n  x: allw\n",
		"unknown key": "rule:\n  x: allow\n",
		"no default":  "roles:\n  r:\n    description: d\n",
	} {
		if p, ds := config.ParsePermissions("p.yml", []byte(src)); p != nil || !ds.HasErrors() {
			t.Errorf("%s: want errors, got %+v %v", name, p, ds)
		}
	}
}

func TestLoadPermissionsMissingUsesShipped(t *testing.T) {
	shipped := config.Permissions{Rules: map[string]string{"x": "deny"}}
	file := filepath.Join(t.TempDir(), "permissions.yml")
	p, err := config.LoadPermissions(file, shipped)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Missing || p.File != file || p.Rules["x"] != "deny" {
		t.Errorf("got %+v", p)
	}
}

// With no path named, permissions.yml is the project directory's when it
// has one, else the user's in EVOKORE_HOME: the file serve, vet and doctor
// all read.
func TestDefaultPermissionsIsTheProjectsElseTheUsers(t *testing.T) {
	home := t.TempDir()
	t.Chdir(t.TempDir())
	if path, project := config.DefaultPermissions(home); project || path != filepath.Join(home, "permissions.yml") {
		t.Errorf("no ./permissions.yml: %q (project %v), want the user's", path, project)
	}
	if err := os.WriteFile("permissions.yml", []byte("rules: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if path, project := config.DefaultPermissions(home); !project || path != "permissions.yml" {
		t.Errorf("with ./permissions.yml: %q (project %v), want the project's", path, project)
	}
}

func TestServerResolve(t *testing.T) {
	s := config.Server{
		ID:      "svc",
		Command: "${BIN}",
		Args:    []string{"--token=${TOKEN}", "plain", "${A}${B}"},
		Cwd:     "${DIR}/sub",
		URL:     "https://${HOST}/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"},
		Env:     map[string]string{"KEY": "${SECRET}", "LITERAL": "no placeholder"},
	}
	env := config.NewEnv(map[string]string{
		"BIN": "node", "TOKEN": "t0k", "A": "a", "B": "", "DIR": "base",
		"HOST": "mcp.example.com", "SECRET": "s3",
	})
	r, err := s.Resolve(env)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Server{
		ID:      "svc",
		Command: "node",
		Args:    []string{"--token=t0k", "plain", "a"},
		Cwd:     "base/sub",
		Dir:     "base/sub",
		URL:     "https://mcp.example.com/mcp",
		Headers: map[string]string{"Authorization": "Bearer t0k"},
		Env:     map[string]string{"KEY": "s3", "LITERAL": "no placeholder"},
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("Resolve:\n got %+v\nwant %+v", r, want)
	}
	// The original is untouched.
	if s.Args[0] != "--token=${TOKEN}" || s.Env["KEY"] != "${SECRET}" || s.Headers["Authorization"] != "Bearer ${TOKEN}" {
		t.Errorf("Resolve modified its receiver: %+v", s)
	}

	// Every key kind names itself in the error, with all of its missing
	// placeholders.
	for _, tc := range []struct {
		server config.Server
		key    string
	}{
		{config.Server{Command: "${A}-${B}"}, "command"},
		{config.Server{Command: "x", Args: []string{"ok", "${A}${B}"}}, "args[1]"},
		{config.Server{Command: "x", Cwd: "${A}/${B}"}, "cwd"},
		{config.Server{URL: "https://${A}:${B}/"}, "url"},
		{config.Server{URL: "u", Headers: map[string]string{"X-Auth": "${A} ${B}"}}, "headers.X-Auth"},
		{config.Server{Command: "x", Env: map[string]string{"MY_VAR": "${A}${B}"}}, "MY_VAR"},
	} {
		tc.server.ID = "svc"
		_, err := tc.server.Resolve(config.NewEnv(nil))
		want := "Unresolved env placeholder(s) for child server 'svc' key '" + tc.key + "': ${A}, ${B}"
		if err == nil || err.Error() != want {
			t.Errorf("key %s: error %v\nwant %s", tc.key, err, want)
		}
	}

	// The first key that needs a variable is the one named.
	both := config.Server{ID: "svc", Command: "${A}", Env: map[string]string{"E": "${B}"}}
	if _, err := both.Resolve(config.NewEnv(nil)); err == nil || !strings.Contains(err.Error(), "key 'command': ${A}") {
		t.Errorf("got %v, want the command named first", err)
	}

	// An empty value counts as set.
	empty := config.Server{ID: "svc", Command: "run${A}", Env: map[string]string{"E": "${A}"}}
	r, err = empty.Resolve(config.NewEnv(map[string]string{"A": ""}))
	if err != nil {
		t.Fatalf("empty value treated as unset: %v", err)
	}
	if r.Command != "run" || r.Env["E"] != "" {
		t.Errorf("got %+v", r)
	}
}

func TestPlaceholders(t *testing.T) {
	s := config.Server{
		ID: "svc", Command: "${BIN}", Args: []string{"x", "${A}"}, Cwd: "${D}", URL: "${U}",
		Headers: map[string]string{"H": "${H1}"}, Env: map[string]string{"E": "${E1}${E2}"},
	}
	var got []string
	for _, p := range s.Placeholders() {
		got = append(got, p.Key+"="+p.Var+"@"+strings.Join(p.Path, "."))
	}
	want := []string{
		"command=BIN@servers.svc.command",
		"args[1]=A@servers.svc.args.1",
		"cwd=D@servers.svc.cwd",
		"url=U@servers.svc.url",
		"headers.H=H1@servers.svc.headers.H",
		"E=E1@servers.svc.env.E",
		"E=E2@servers.svc.env.E",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Placeholders:\n got %q\nwant %q", got, want)
	}
}

func TestParseDotEnv(t *testing.T) {
	src := `# a comment
   # an indented comment

PLAIN=value
export EXPORTED=yes
SPACED = around
SINGLE='literal #not-a-comment \n $X'
DOUBLE="tab\there \"quoted\" \\ end"
INLINE=value # trailing comment
HASH=a#b
EMPTY=
EQUALS=a=b=c
not a pair
BAD KEY=1
=novalue
`
	vars, ds := config.ParseDotEnv(".env", []byte(src))
	want := map[string]string{
		"PLAIN":    "value",
		"EXPORTED": "yes",
		"SPACED":   "around",
		"SINGLE":   `literal #not-a-comment \n $X`,
		"DOUBLE":   "tab\there \"quoted\" \\ end",
		"INLINE":   "value",
		"HASH":     "a#b",
		"EMPTY":    "",
		"EQUALS":   "a=b=c",
	}
	if !maps.Equal(vars, want) {
		t.Errorf("vars:\n got %q\nwant %q", vars, want)
	}
	var lines []int
	for _, d := range ds {
		if d.Severity != config.SeverityWarning || d.File != ".env" || d.Col != 1 {
			t.Errorf("unexpected diagnostic %v", d)
		}
		lines = append(lines, d.Line)
	}
	if want := []int{13, 14, 15}; !slices.Equal(lines, want) {
		t.Errorf("warnings on lines %v, want %v", lines, want)
	}
}

func TestReadSettingsDefaults(t *testing.T) {
	d := config.Defaults{
		ChildBootTimeout:    15 * time.Second,
		ProxyRequestTimeout: 60 * time.Second,
		SessionTTL:          time.Hour,
		ShutdownGrace:       3 * time.Second,
	}
	s, warnings := config.ReadSettings(config.NewEnv(nil), d)
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"ConfigPath", s.ConfigPath, "mcp.config.json"},
		{"PermissionsPath", s.PermissionsPath, "permissions.yml"},
		{"SkillsDir", s.SkillsDir, "SKILLS"},
		{"Children.Boot", s.Children.Boot, d.ChildBootTimeout},
		{"Children.Request", s.Children.Request, d.ProxyRequestTimeout},
		{"Children.ShutdownGrace", s.Children.ShutdownGrace, d.ShutdownGrace},
		{"SessionTTL", s.SessionTTL, d.SessionTTL},
		{"Home base", filepath.Base(s.Home), ".evokore"},
		{"PluginsDir", s.PluginsDir, filepath.Join(s.Home, "plugins")},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}

	home := filepath.Join(t.TempDir(), "evokore-home")
	s, warnings = config.ReadSettings(config.NewEnv(map[string]string{
		"EVOKORE_HOME":                         home,
		"EVOKORE_MCP_CONFIG_PATH":              "conf/mcp.json",
		"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "2500",
	}), d)
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	if s.Home != home || s.PluginsDir != filepath.Join(home, "plugins") || s.ConfigPath != "conf/mcp.json" || s.ConfigPathFrom != "EVOKORE_MCP_CONFIG_PATH" {
		t.Errorf("paths: home %q plugins %q config %q from %q", s.Home, s.PluginsDir, s.ConfigPath, s.ConfigPathFrom)
	}
	if s.Children.Boot != 2500*time.Millisecond {
		t.Errorf("Children.Boot = %v", s.Children.Boot)
	}
}

func TestReadSettingsWarnings(t *testing.T) {
	d := config.Defaults{ChildBootTimeout: 15 * time.Second, ProxyRequestTimeout: time.Minute, SessionTTL: time.Hour}
	env := config.NewEnv(map[string]string{
		"EVOKORE_HOME":                         t.TempDir(),
		"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "abc",
		"EVOKORE_PROXY_REQUEST_TIMEOUT_MS":     "-5",
		"EVOKORE_SESSION_TTL_MS":               "0",
	})
	s, warnings := config.ReadSettings(env, d)
	want := []string{
		`Ignoring EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS="abc": want a positive number of milliseconds.`,
		`Ignoring EVOKORE_PROXY_REQUEST_TIMEOUT_MS="-5": want a positive number of milliseconds.`,
		`Ignoring EVOKORE_SESSION_TTL_MS="0": want a positive number of milliseconds.`,
	}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
	if s.Children.Boot != d.ChildBootTimeout || s.Children.Request != d.ProxyRequestTimeout || s.SessionTTL != d.SessionTTL {
		t.Errorf("bad values did not fall back to defaults: %v %v %v", s.Children.Boot, s.Children.Request, s.SessionTTL)
	}
}

func TestLoadShipped(t *testing.T) {
	s, err := config.LoadShipped("../../evokore.cue")
	if err != nil {
		t.Fatalf("LoadShipped: %v", err)
	}
	if len(s.Tools) != 38 {
		t.Errorf("%d native tools, want 38", len(s.Tools))
	}
	seen := map[string]bool{}
	for _, tool := range s.Tools {
		if seen[tool.Name] {
			t.Errorf("tool %q listed twice", tool.Name)
		}
		seen[tool.Name] = true
		var schema map[string]any
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: input schema %s (%v)", tool.Name, tool.InputSchema, err)
		}
		if tool.Description == "" || tool.Manager == "" {
			t.Errorf("%s: empty description or manager", tool.Name)
		}
	}
	for _, name := range []string{"discover_tools", "search_skills", "describe_tool"} {
		if !seen[name] {
			t.Errorf("native tool %s missing", name)
		}
	}
	var profiles []string
	for _, p := range s.Profiles {
		profiles = append(profiles, p.Name)
	}
	if !slices.Contains(profiles, s.DefaultProfile) {
		t.Errorf("default profile %q is not among %v", s.DefaultProfile, profiles)
	}
	if len(s.Roles) == 0 || s.Server.Name == "" || s.Timeouts.ChildBootMs <= 0 {
		t.Errorf("incomplete: roles %d, server %q, timeouts %+v", len(s.Roles), s.Server.Name, s.Timeouts)
	}

	if _, err := config.LoadShipped(filepath.Join(t.TempDir(), "evokore.cue")); err == nil {
		t.Error("LoadShipped of a missing file succeeded")
	}
}

func TestYAMLAliasInsideItsAnchorIsRejected(t *testing.T) {
	// CUE's YAML reader recurses forever on this; it must be refused first.
	_, ds := config.ParsePermissions("p.yml", []byte("x: &a {<<: *a}\n"))
	if len(ds) != 1 || ds[0].Line != 1 || !strings.Contains(ds[0].Message, "alias *a is used inside its own anchor &a") {
		t.Fatalf("diagnostics = %v", ds)
	}
}

func TestYAMLWithCarriageReturnsParses(t *testing.T) {
	p, ds := config.ParsePermissions("p.yml", []byte("rules:\r  fs_read_file: allow\r  x_y: deny\r"))
	if ds != nil || p.Rules["x_y"] != "deny" {
		t.Fatalf("got %v %v", p, ds)
	}
}

func TestParseMCPConfigOtherClientsShapes(t *testing.T) {
	cfg := parseConfig(t, `{
  "numStartups": 3,
  "projects": {"/p": {"mcpServers": {},
    "history": ["ünïcödé", {"x": [1, 2]}]}},
  "servers": {"own": {"command": "a"}},
  "mcpServers": {
    "plain":    {"command": "b"},
    "typed":    {"type": "stdio", "command": "c"},
    "remote":   {"type": "http", "url": "https://example.com/mcp"},
    "stream":   {"type": "streamable-http", "url": "https://example.com/mcp"},
    "both":     {"type": "http", "transport": "http", "url": "https://example.com/mcp"},
    "clash":    {"type": "stdio", "transport": "http", "command": "d"},
    "legacy":   {"type": "sse", "url": "https://example.com/sse"},
    "own":      {"command": "again"},
    "typo":     {"command": "e", "disabled": true, "autoApprove": []}
  }
}`)
	want := map[string]string{
		"own": "stdio", "plain": "stdio", "typed": "stdio", "remote": "http", "stream": "http", "both": "http",
		"clash": "stdio", "legacy": "sse", "typo": "stdio",
	}
	invalid := map[string]string{"clash": "disagree", "typo": "autoApprove: field not allowed"}
	var got []string
	for _, s := range cfg.Servers {
		got = append(got, s.ID)
		if s.Transport != want[s.ID] {
			t.Errorf("%s: transport %q, want %q", s.ID, s.Transport, want[s.ID])
		}
		if frag := invalid[s.ID]; (frag == "") != (s.Invalid == "") || !strings.Contains(s.Invalid, frag) {
			t.Errorf("%s: Invalid %q, want %q", s.ID, s.Invalid, frag)
		}
	}
	if strings.Join(got, " ") != "own plain typed remote stream both clash legacy typo" {
		t.Errorf("servers %v", got)
	}
	// The other client's keys are skipped without moving a position.
	if p := cfg.Pos("mcpServers", "plain", "command"); p.Line != 7 || p.Col != 29 {
		t.Errorf("mcpServers.plain.command at %v, want line 7 col 29", p)
	}
	if s, _ := cfg.Server("typo"); !s.Disabled {
		t.Error("a disabled server with a problem must stay disabled")
	}
	if s, _ := cfg.Server("own"); s.Command != "a" {
		t.Errorf("the first definition of a duplicate id wins, got %+v", s)
	}
	if !strings.Contains(cfg.ServerProblems.Error(), "mcpServers.own: server 'own' is defined twice") {
		t.Errorf("duplicate not reported: %v", cfg.ServerProblems)
	}
}

func TestServerDirIsRelativeToTheConfigFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.config.json")
	if err := os.WriteFile(path, []byte(`{"servers": {
  "none": {"command": "x"},
  "rel": {"command": "x", "cwd": "./sub"},
  "abs": {"command": "x", "cwd": "/opt"},
  "var": {"command": "x", "cwd": "${D}/deeper"}
}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadMCPConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"none": dir, "rel": filepath.Join(dir, "sub"), "abs": "/opt", "var": filepath.Join(dir, "in", "deeper")}
	for _, s := range cfg.Servers {
		r, err := s.Resolve(config.NewEnv(map[string]string{"D": "in"}))
		if err != nil {
			t.Fatal(err)
		}
		if r.Dir != want[s.ID] {
			t.Errorf("%s: Dir %q, want %q", s.ID, r.Dir, want[s.ID])
		}
	}
}

// A server's roots are folders relative to the config file, ${VAR}
// allowed; limitScope takes its two words only.
func TestServerRootsAndLimitScope(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.config.json")
	if err := os.WriteFile(path, []byte(`{"servers": {
  "fs": {"command": "x", "roots": ["./docs", "/srv/shared", "${D}/more"], "limitScope": "global"},
  "bad": {"command": "x", "limitScope": "everyone"}
}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadMCPConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := cfg.Server("fs")
	r, err := s.Resolve(config.NewEnv(map[string]string{"D": "in"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "docs"), "/srv/shared", filepath.Join(dir, "in", "more")}
	if !slices.Equal(r.Roots, want) || r.LimitScope != config.LimitGlobal {
		t.Errorf("roots %q, limitScope %q", r.Roots, r.LimitScope)
	}
	if bad, _ := cfg.Server("bad"); bad.Invalid == "" || !strings.Contains(cfg.ServerProblems.Error(), "limitScope") {
		t.Errorf("an unknown limitScope must fail its server: %q / %v", bad.Invalid, cfg.ServerProblems)
	}
}
