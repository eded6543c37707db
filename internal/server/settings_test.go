package server_test

import (
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/server"
	"github.com/evokore/evokore/internal/voice"
)

// A declared default is the value an unset variable takes, whichever
// package reads it.
func TestDeclaredDefaultsAreTheSettingsDefaults(t *testing.T) {
	env := config.NewEnv(map[string]string{"EVOKORE_HOME": t.TempDir()})
	s, warnings := config.ReadSettings(env, config.Defaults{})
	p, more := server.ReadPartSettings(env)
	h, _ := config.ReadHTTPSettings(env)
	if warnings = append(warnings, more...); len(warnings) != 0 {
		t.Fatal(warnings)
	}
	got := map[string]string{
		"EVOKORE_MCP_CONFIG_PATH":              s.ConfigPath,
		"EVOKORE_PERMISSIONS_PATH":             s.PermissionsPath,
		"EVOKORE_SKILLS_DIR":                   s.SkillsDir,
		"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": strconv.FormatInt(s.Children.Boot.Milliseconds(), 10),
		"EVOKORE_PROXY_REQUEST_TIMEOUT_MS":     strconv.FormatInt(s.Children.Request.Milliseconds(), 10),
		"EVOKORE_SESSION_TTL_MS":               strconv.FormatInt(s.SessionTTL.Milliseconds(), 10),
		"EVOKORE_TOOL_DISCOVERY_MODE":          p.Catalog.Discovery.Mode,
		"EVOKORE_TOOL_LIST_PAGINATION":         strconv.FormatBool(p.Catalog.Pagination),
		"EVOKORE_TOOL_LIST_PAGE_SIZE":          strconv.Itoa(p.Catalog.PageSize),
		"EVOKORE_TOOL_SCHEMA_MODE":             p.Catalog.SchemaMode,
		"EVOKORE_TOOL_SCHEMA_FALLBACK_MS":      strconv.FormatInt(p.Catalog.SchemaFallback.Milliseconds(), 10),
		"EVOKORE_SECURITY_DEFAULT_DENY":        strconv.FormatBool(p.Policy.DefaultDeny),
		"EVOKORE_AUDIT_LOG":                    strconv.FormatBool(p.Records.AuditLog),
		"EVOKORE_AUDIT_MAX_BYTES":              strconv.FormatInt(p.Records.AuditMaxBytes, 10),
		"EVOKORE_AUDIT_KEEP":                   strconv.Itoa(p.Records.AuditKeep),
		"EVOKORE_SESSION_REPLAY":               strconv.FormatBool(p.Records.SessionReplay),
		"EVOKORE_WEBHOOKS_ENABLED":             strconv.FormatBool(p.Records.Webhooks),
		"EVOKORE_WEBHOOKS_ALLOW_PRIVATE":       strconv.FormatBool(p.Records.WebhooksAllowPrivate),
		"EVOKORE_TELEMETRY":                    strconv.FormatBool(p.Natives.Telemetry),
		"EVOKORE_SKILL_WATCHER":                strconv.FormatBool(p.Natives.SkillWatcher),
		"EVOKORE_HTTP_ALLOW_PRIVATE":           strconv.FormatBool(p.Natives.HTTPAllowPrivate),
		"EVOKORE_CODE_TIMEOUT_MS":              strconv.FormatInt(p.Natives.Code.Wall.Milliseconds(), 10),
		"EVOKORE_CODE_CPU_MS":                  strconv.FormatInt(p.Natives.Code.CPU.Milliseconds(), 10),
		"EVOKORE_CODE_MEMORY_MB":               strconv.FormatInt(p.Natives.Code.Memory>>20, 10),
		"EVOKORE_CODE_MAX_CALLS":               strconv.Itoa(p.Natives.Code.Calls),
		"EVOKORE_CODE_MAX_OUTPUT_BYTES":        strconv.Itoa(p.Natives.Code.Output),
		"EVOKORE_HTTP_HOST":                    h.Host,
		"EVOKORE_HTTP_PORT":                    strconv.Itoa(h.Port),
		"EVOKORE_AUTH_MODE":                    h.AuthMode,
	}
	for name, value := range got {
		v, ok := config.LookupVariable(name)
		if !ok || !v.HasDefault || v.Default != value {
			t.Errorf("%s: declared default %q (declared %v), settings take %q", name, v.Default, ok, value)
		}
	}
}

// Every boolean setting takes the same spellings, whichever package
// reads it, and a spelling none takes is reported, naming the variable.
func TestBooleanSettingsShareOneParser(t *testing.T) {
	keys := []string{"EVOKORE_TOOL_LIST_PAGINATION", "EVOKORE_SECURITY_DEFAULT_DENY", "EVOKORE_TELEMETRY", "EVOKORE_SKILL_WATCHER",
		"EVOKORE_HTTP_ALLOW_PRIVATE", "EVOKORE_AUDIT_LOG", "EVOKORE_SESSION_REPLAY", "EVOKORE_WEBHOOKS_ENABLED", "EVOKORE_WEBHOOKS_ALLOW_PRIVATE",
		"VOICE_SIDECAR_DISABLE_PLAYBACK", "EVOKORE_STT_ENABLED"}
	read := func(raw string) ([]bool, []string) {
		vars := map[string]string{"ELEVENLABS_API_KEY": "k", "OPENAI_API_KEY": "k", "VOICE_SIDECAR_PLAYER": "player"}
		for _, k := range keys {
			vars[k] = raw
		}
		p, warnings := server.ReadPartSettings(config.NewEnv(vars))
		o, more, err := voice.ReadOptions(config.NewEnv(vars), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return []bool{p.Catalog.Pagination, p.Policy.DefaultDeny, p.Natives.Telemetry, p.Natives.SkillWatcher,
			p.Natives.HTTPAllowPrivate, p.Records.AuditLog, p.Records.SessionReplay, p.Records.Webhooks, p.Records.WebhooksAllowPrivate,
			o.DisablePlayback, o.STT != nil}, append(warnings, more...)
	}
	for _, raw := range []string{"1", "true", "TRUE", "on", "On", "yes", " yes "} {
		if got, warnings := read(raw); slices.Contains(got, false) || len(warnings) != 0 {
			t.Errorf("%q: %v, warnings %v", raw, got, warnings)
		}
	}
	for _, raw := range []string{"0", "false", "off", "no"} {
		if got, warnings := read(raw); slices.Contains(got, true) || len(warnings) != 0 {
			t.Errorf("%q: %v, warnings %v", raw, got, warnings)
		}
	}
	_, warnings := read("enabled")
	for _, k := range keys {
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, "Ignoring "+k+`="enabled"`) }) {
			t.Errorf("%s=enabled is not reported: %q", k, warnings)
		}
	}
}

// A value a package cannot use is reported with the variable, the value
// and what applies instead, and the setting takes its fallback: the
// declared default (a default-on switch stays on), or for a security
// setting the strict choice.
func TestPartSettingsReportBadValues(t *testing.T) {
	p, warnings := server.ReadPartSettings(config.NewEnv(map[string]string{
		"EVOKORE_TELEMETRY":             "enabled",
		"EVOKORE_AUDIT_KEEP":            "-1",
		"EVOKORE_AUDIT_MAX_BYTES":       "lots",
		"EVOKORE_TOOL_DISCOVERY_MODE":   "Turbo",
		"EVOKORE_TOOL_LIST_PAGE_SIZE":   "lots",
		"EVOKORE_TOOL_SCHEMA_MODE":      "Lazy",
		"EVOKORE_SECURITY_DEFAULT_DENY": "sure",
		"EVOKORE_CODE_TIMEOUT_MS":       "soon",
		"EVOKORE_CODE_MAX_CALLS":        "0",
		"EVOKORE_AUDIT_LOG":             "ture",
	}))
	want := []string{
		`Ignoring EVOKORE_SECURITY_DEFAULT_DENY="sure": want 1, true, on or yes (or 0, false, off, no). Using true, the strict choice.`,
		`Unknown EVOKORE_TOOL_DISCOVERY_MODE 'Turbo'. Falling back to dynamic mode.`,
		`Ignoring EVOKORE_TOOL_LIST_PAGE_SIZE="lots": want a number.`,
		`Unknown EVOKORE_TOOL_SCHEMA_MODE 'lazy'. Using full schemas.`,
		`Ignoring EVOKORE_TELEMETRY="enabled": want 1, true, on or yes (or 0, false, off, no). Using the default, false.`,
		`Ignoring EVOKORE_CODE_TIMEOUT_MS="soon": want a positive number of milliseconds.`,
		`Ignoring EVOKORE_CODE_MAX_CALLS="0": want a positive number.`,
		`Ignoring EVOKORE_AUDIT_LOG="ture": want 1, true, on or yes (or 0, false, off, no). Using the default, true.`,
		`Ignoring EVOKORE_AUDIT_MAX_BYTES="lots": want a positive number.`,
		`Ignoring EVOKORE_AUDIT_KEEP="-1": want a positive number.`,
	}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
	if p.Natives.Telemetry || !p.Policy.DefaultDeny || !p.Records.AuditLog || p.Records.AuditKeep != config.DefaultAuditKeep ||
		p.Records.AuditMaxBytes != config.DefaultAuditMaxBytes || p.Catalog.Discovery.Mode != config.ModeDynamic ||
		!p.Catalog.Discovery.ModeSet || p.Catalog.PageSize != config.DefaultToolListPageSize || p.Catalog.SchemaMode != config.DefaultToolSchemaMode ||
		p.Natives.Code.Wall != config.DefaultCodeTimeout || p.Natives.Code.Calls != config.DefaultCodeMaxCalls {
		t.Errorf("bad values did not take their fallbacks: %+v", p)
	}
	p, _ = server.ReadPartSettings(config.NewEnv(map[string]string{"EVOKORE_TOOL_LIST_PAGE_SIZE": "0"}))
	if p.Catalog.PageSize != 1 {
		t.Errorf("page size 0 clamps to %d, want 1", p.Catalog.PageSize)
	}
}
