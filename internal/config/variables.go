package config

import (
	"slices"
	"strings"
)

// Variable is one environment variable of evokore's families, as
// evokore.cue declares it. The generated table (variables_gen.go) holds
// every one; nothing else lists them.
type Variable struct {
	Name string `json:"-"`
	// Type is how the value is read: string, bool, int, duration_ms,
	// path, url, list or enum.
	Type string `json:"type"`
	// Default is the value an unset or empty variable takes, written as
	// the variable's text would be; HasDefault tells "" from none.
	// DefaultText says a computed default in words.
	Default     string `json:"-"`
	HasDefault  bool   `json:"-"`
	DefaultText string `json:"defaultText"`
	Doc         string `json:"doc"`
	// Package is the directory of the package that reads (or sets) it.
	Package string `json:"package"`
	// Group is its section of docs/configuration.md.
	Group string `json:"group"`
	// Use is setting, child (set by evokore for a process it starts),
	// internal or test.
	Use string `json:"use"`
	// Security marks a variable a project's .env sets only once trusted.
	Security bool     `json:"security"`
	Values   []string `json:"values"`
}

// Variables returns the declared EVOKORE_* and VOICE_SIDECAR_* variables,
// in evokore.cue's order.
func Variables() []Variable { return slices.Clone(variables[:]) }

// LookupVariable returns the declaration of name.
func LookupVariable(name string) (Variable, bool) {
	i, ok := variableIndex[name]
	if !ok {
		return Variable{}, false
	}
	return variables[i], true
}

var variableIndex = func() map[string]int {
	m := make(map[string]int, len(variables))
	for i, v := range variables {
		m[v.Name] = i
	}
	return m
}()

// otelVariables are the OpenTelemetry specification's variables evokore
// honours (internal/tracing's Variables is this list): read by the
// OpenTelemetry SDK and its OTLP exporters from the process environment,
// not from a .env file, and never reported as unknown, since other
// programs share them.
var otelVariables = []string{
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
// families, as declared, and the OTEL_* ones it honours), sorted.
func KnownVariables() []string {
	out := slices.Clone(otelVariables)
	for _, v := range variables {
		out = append(out, v.Name)
	}
	slices.Sort(out)
	return out
}

// IsKnownVariable reports whether evokore reads or sets the variable.
func IsKnownVariable(name string) bool {
	_, ok := variableIndex[name]
	return ok || slices.Contains(otelVariables, name)
}

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
	for _, v := range variables {
		if d := EditDistance(name, v.Name); d < bestD {
			best, bestD = v.Name, d
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
