// Package schema holds the CUE definitions of every file a user of evokore
// writes (mcp.config.json, permissions.yml, discovery profiles, skill
// frontmatter, voices.json, plugin manifests, damage-control-rules.yaml) and of evokore.cue, the file
// that declares what the router ships.
//
// The definitions are embedded in the binary so that run-time validation,
// `evokore vet` and `go generate` all read the same text. This package only
// carries the files; internal/config is the one place that evaluates them.
package schema

import "embed"

// FS holds the *.cue files of package schema.
//
//go:embed *.cue
var FS embed.FS

// Definition names the top-level definitions other packages look up.
const (
	MCPConfig        = "#MCPConfig"
	ForeignConfig    = "#ForeignConfig"
	Server           = "#Server"
	Permissions      = "#Permissions"
	Role             = "#Role"
	Shipped          = "#Shipped"
	SkillFrontmatter = "#SkillFrontmatter"
	Voices           = "#Voices"
	PluginManifest   = "#PluginManifest"
	DamageControl    = "#DamageControlRules"
)
