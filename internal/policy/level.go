package policy

import "github.com/evokore/evokore/internal/config"

// Level is what a call to a tool may do.
type Level uint8

// Levels, from most to least permissive.
const (
	Allow Level = iota
	RequireApproval
	Deny
)

// String returns the level as permissions.yml writes it.
func (l Level) String() string {
	switch l {
	case RequireApproval:
		return config.LevelRequireApproval
	case Deny:
		return config.LevelDeny
	}
	return config.LevelAllow
}

// ParseLevel reads a level as permissions.yml writes it; the schema has
// already rejected anything else, which reads as Allow.
func ParseLevel(s string) Level {
	switch s {
	case config.LevelRequireApproval:
		return RequireApproval
	case config.LevelDeny:
		return Deny
	}
	return Allow
}
