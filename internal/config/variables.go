package config

import (
	"slices"
	"strings"
)

// knownVariables are the EVOKORE_* and VOICE_SIDECAR_* variables evokore
// reads or sets, the one list of them, and the OpenTelemetry
// specification's OTEL_* variables it honours: a variable of evokore's
// families that is not here has no effect, and is reported so an operator
// migrating from EVOKORE-MCP learns which settings are not honoured (OTEL_*
// ones are not reported: they are shared with other programs). A test
// checks that every such name the code spells is listed.
var knownVariables = []string{
	// Router settings (ReadSettings).
	"EVOKORE_MCP_CONFIG_PATH", "EVOKORE_PERMISSIONS_PATH", "EVOKORE_SKILLS_DIR",
	"EVOKORE_HOME", "EVOKORE_PLUGINS_DIR",
	"EVOKORE_TOOL_DISCOVERY_MODE", "EVOKORE_DISCOVERY_PROFILE",
	"EVOKORE_ROLE", "EVOKORE_SECURITY_DEFAULT_DENY", "EVOKORE_APPROVALS_MODE",
	"EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS", "EVOKORE_PROXY_REQUEST_TIMEOUT_MS",
	"EVOKORE_SESSION_TTL_MS",
	"EVOKORE_TOOL_LIST_PAGINATION", "EVOKORE_TOOL_LIST_PAGE_SIZE",
	"EVOKORE_TOOL_SCHEMA_MODE", "EVOKORE_TOOL_SCHEMA_FALLBACK_MS",
	"EVOKORE_TELEMETRY", "EVOKORE_TELEMETRY_DIR", "EVOKORE_SKILL_WATCHER", "EVOKORE_HTTP_ALLOW_PRIVATE",
	// Where HTTP sessions are kept, and the state replicas share.
	"EVOKORE_SESSION_STORE", "EVOKORE_REDIS_URL", "EVOKORE_REDIS_KEY_PREFIX", "EVOKORE_APPROVAL_KEY_FILE",
	// Operator records: the audit log and webhooks.
	"EVOKORE_AUDIT_LOG", "EVOKORE_AUDIT_MAX_BYTES", "EVOKORE_AUDIT_KEEP",
	"EVOKORE_WEBHOOKS_ENABLED", "EVOKORE_WEBHOOKS_ALLOW_PRIVATE", "EVOKORE_SESSION_REPLAY",
	// execute_skill's sandbox.
	"EVOKORE_SANDBOX_MODE", "EVOKORE_SANDBOX_MEMORY_MB", "EVOKORE_SANDBOX_CPU_LIMIT",
	"EVOKORE_SANDBOX_SECCOMP_PROFILE", "EVOKORE_SANDBOX_TIMEOUT_MS",
	// Set by evokore for the processes it starts (skills, plugins).
	"EVOKORE_SANDBOX", "EVOKORE_SESSION_ID", "EVOKORE_SESSION_ROLE",
	"EVOKORE_TOOL_NAME", "EVOKORE_PLUGIN_DIR",
	// Internal to the process launcher: marks the watchdog's own run.
	"EVOKORE_PROCGROUP_WATCHDOG",
	// Set by a router in its child servers' environment (config.DepthVar).
	"EVOKORE_ROUTER_DEPTH",
	// The benchmarks' allocation probe (cmd/evokore, SIGUSR1).
	"EVOKORE_DEBUG_MEMSTATS",
	// A CPU profile of the serve run (cmd/evokore), for performance work.
	"EVOKORE_DEBUG_CPUPROFILE",
	// The voice sidecar (evokore voice).
	"EVOKORE_VOICES_PATH", "EVOKORE_TTS_PROVIDER", "EVOKORE_TTS_BASE_URL",
	"EVOKORE_TTS_API_KEY", "EVOKORE_TTS_VOICE", "EVOKORE_TTS_MODEL",
	"EVOKORE_ELEVENLABS_BASE_URL",
	"EVOKORE_STT_ENABLED", "EVOKORE_STT_PROVIDER", "EVOKORE_STT_MODEL",
	"EVOKORE_STT_LOCAL_MODEL", "EVOKORE_STT_BASE_URL", "EVOKORE_WHISPER_PATH",
	"VOICE_SIDECAR_PORT", "VOICE_SIDECAR_HOST", "VOICE_SIDECAR_MAX_CONNECTIONS",
	"VOICE_SIDECAR_DISABLE_PLAYBACK", "VOICE_SIDECAR_ARTIFACT_DIR",
	"VOICE_SIDECAR_PLAYER", "VOICE_SIDECAR_PERSONA",
	// The Claude Code hooks (evokore hook <name>).
	"EVOKORE_REPO_AUDIT_HOOK",
	// The streamable HTTP transport (evokore serve --http).
	"EVOKORE_HTTP_MODE", "EVOKORE_HTTP_HOST", "EVOKORE_HTTP_PORT",
	"EVOKORE_HTTP_ALLOWED_HOSTS", "EVOKORE_HTTP_ALLOWED_ORIGINS",
	"EVOKORE_AUTH_REQUIRED", "EVOKORE_AUTH_MODE", "EVOKORE_AUTH_TOKEN",
	"EVOKORE_OAUTH_ISSUER", "EVOKORE_OAUTH_AUDIENCE", "EVOKORE_OAUTH_JWKS_URI", "EVOKORE_OAUTH_RESOURCE",
	"EVOKORE_OAUTH_ALLOW_ANY_AUDIENCE",
	"EVOKORE_TENANT_SCOPING",
	// The session dashboard (evokore dashboard).
	"EVOKORE_DASHBOARD_HOST", "EVOKORE_DASHBOARD_PORT", "EVOKORE_DASHBOARD_TOKEN", "EVOKORE_DASHBOARD_ROLE",
	"EVOKORE_DASHBOARD_APPROVAL_WS_URL", "EVOKORE_DASHBOARD_APPROVAL_WS_TOKEN",
	// The test suite (make test).
	"EVOKORE_REQUIRE_NPM", "EVOKORE_REQUIRE_PYTHON", "EVOKORE_REQUIRE_SERVICES",
	// OpenTelemetry export (internal/tracing, whose Variables is this
	// list): read by the OpenTelemetry SDK and its OTLP exporters from the
	// process environment, not from a .env file.
	"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER",
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
	"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
	"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION",
	"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_KEY", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY",
	"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TRACES_INSECURE", "OTEL_EXPORTER_OTLP_METRICS_INSECURE",
	"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
	"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG",
	"OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT", "OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
	"OTEL_METRIC_EXPORT_INTERVAL", "OTEL_METRIC_EXPORT_TIMEOUT",
	"OTEL_RESOURCE_ATTRIBUTES", "OTEL_SERVICE_NAME",
}

// originalOnly are EVOKORE-MCP's settings evokore does not honour (yet):
// named so the report can say so instead of suspecting a typo.
var originalOnly = []string{
	"EVOKORE_STEERING_MODE", "EVOKORE_SKILL_GRAPH_PATH", "EVOKORE_SANDBOX_PREPULL",
	"EVOKORE_WS_APPROVALS_ENABLED", "EVOKORE_WS_APPROVALS_MAX_CLIENTS",
	"EVOKORE_WS_APPROVALS_HEARTBEAT_MS", "EVOKORE_WS_APPROVALS_ALLOW_QUERY_TOKEN",
	"EVOKORE_TELEMETRY_EXPORT", "EVOKORE_TELEMETRY_EXPORT_URL",
	"EVOKORE_TELEMETRY_EXPORT_INTERVAL_MS", "EVOKORE_TELEMETRY_EXPORT_SECRET",
}

// KnownVariables returns the variables evokore reads or sets (its own
// families and the OTEL_* ones it honours), sorted.
func KnownVariables() []string {
	out := slices.Clone(knownVariables)
	slices.Sort(out)
	return out
}

// IsKnownVariable reports whether evokore reads or sets the variable.
func IsKnownVariable(name string) bool { return slices.Contains(knownVariables, name) }

// UnknownVariable is a variable of evokore's families that has no effect.
type UnknownVariable struct {
	Name string
	// Message says why it has no effect, and what was probably meant.
	Message string
}

// UnknownVariables lists, sorted, the EVOKORE_* and VOICE_SIDECAR_*
// variables of env that evokore does not know.
func UnknownVariables(env Env) []UnknownVariable {
	var out []UnknownVariable
	for name := range env.vars {
		if !strings.HasPrefix(name, "EVOKORE_") && !strings.HasPrefix(name, "VOICE_SIDECAR_") || IsKnownVariable(name) {
			continue
		}
		msg := name + " is not a setting evokore knows; it has no effect"
		switch {
		case slices.Contains(originalOnly, name) || strings.HasPrefix(name, "EVOKORE_AUDIT_EXPORT_"):
			msg = name + " is an EVOKORE-MCP setting evokore does not support; it has no effect"
		case nearestKnown(name) != "":
			msg += " (did you mean " + nearestKnown(name) + "?)"
		}
		out = append(out, UnknownVariable{Name: name, Message: msg})
	}
	slices.SortFunc(out, func(a, b UnknownVariable) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// nearestKnown is the known variable name a typo most likely meant: at
// most two edits away.
func nearestKnown(name string) string {
	best, bestD := "", 3
	for _, k := range knownVariables {
		if d := EditDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// EditDistance is the Levenshtein distance of a and b, for "did you
// mean" suggestions.
func EditDistance(a, b string) int {
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

// ParseBool reads a boolean setting: 1, true, on and yes are true; 0,
// false, off, no and the empty string are false, case-insensitively. ok
// is false for anything else, which the caller reports.
func ParseBool(raw string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "1", "true", "on", "yes":
		return true, true
	case "", "0", "false", "off", "no":
		return false, true
	}
	return false, false
}
