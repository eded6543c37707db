package catalog

import (
	"strconv"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/config"
)

// Schema modes of tools/list.
const (
	SchemaFull     = "full"
	SchemaDeferred = "deferred"
)

// Discovery is what chooses the discovery profile (Resolve).
type Discovery struct {
	// Mode is EVOKORE_TOOL_DISCOVERY_MODE, config.ModeDynamic or
	// config.ModeLegacy; ModeSet records whether the variable was set at
	// all, which profile precedence needs.
	Mode    string
	ModeSet bool
	Profile string // EVOKORE_DISCOVERY_PROFILE
}

// Settings are what a session is shown of the catalog: the discovery
// profile's choice and the shape of tools/list.
type Settings struct {
	Discovery Discovery

	Pagination     bool          // EVOKORE_TOOL_LIST_PAGINATION
	PageSize       int           // EVOKORE_TOOL_LIST_PAGE_SIZE, clamped to 1..1000
	SchemaMode     string        // EVOKORE_TOOL_SCHEMA_MODE: SchemaFull or SchemaDeferred
	SchemaFallback time.Duration // EVOKORE_TOOL_SCHEMA_FALLBACK_MS
}

// ReadSettings reads the discovery and listing variables; v collects
// what it cannot use.
func ReadSettings(v *config.Vars) Settings {
	s := Settings{
		Discovery:      Discovery{Profile: v.String("EVOKORE_DISCOVERY_PROFILE")},
		Pagination:     v.Bool("EVOKORE_TOOL_LIST_PAGINATION"),
		PageSize:       config.DefaultToolListPageSize,
		SchemaMode:     config.DefaultToolSchemaMode,
		SchemaFallback: v.Millis("EVOKORE_TOOL_SCHEMA_FALLBACK_MS", 0),
	}
	raw := v.Raw("EVOKORE_TOOL_DISCOVERY_MODE")
	mode := strings.ToLower(strings.TrimSpace(raw))
	s.Discovery.ModeSet = mode != ""
	switch mode {
	case "":
		s.Discovery.Mode = config.DefaultToolDiscoveryMode
	case config.ModeDynamic, config.ModeLegacy:
		s.Discovery.Mode = mode
	default:
		s.Discovery.Mode = config.ModeDynamic
		v.Warn("Unknown EVOKORE_TOOL_DISCOVERY_MODE '" + raw + "'. Falling back to dynamic mode.")
	}
	if raw := strings.TrimSpace(v.Raw("EVOKORE_TOOL_LIST_PAGE_SIZE")); raw != "" {
		if n, err := strconv.Atoi(raw); err == nil {
			s.PageSize = min(max(n, 1), 1000)
		} else {
			v.Warn("Ignoring EVOKORE_TOOL_LIST_PAGE_SIZE=" + strconv.Quote(raw) + ": want a number.")
		}
	}
	switch m := strings.ToLower(strings.TrimSpace(v.Raw("EVOKORE_TOOL_SCHEMA_MODE"))); m {
	case "", SchemaFull:
	case SchemaDeferred:
		s.SchemaMode = SchemaDeferred
	default:
		v.Warn("Unknown EVOKORE_TOOL_SCHEMA_MODE '" + m + "'. Using full schemas.")
	}
	return s
}
