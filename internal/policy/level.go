package policy

import (
	"fmt"

	"github.com/evokore/evokore/internal/config"
)

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

// CallNote says what a call gets at this level under role ("" for no
// role), for explaining why a tool is out of reach; "" for Allow.
func (l Level) CallNote(role string) string {
	what := "is denied"
	switch l {
	case Allow:
		return ""
	case RequireApproval:
		what = "needs approval"
	}
	if role == "" {
		return "with no role, a call " + what
	}
	return fmt.Sprintf("under role %q, a call %s", role, what)
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
