package policy

import (
	"strings"

	"github.com/evokore/evokore/internal/config"
)

// Settings are the environment's say in who may do what.
type Settings struct {
	Role        string // EVOKORE_ROLE; "" defers to permissions.yml's active_role
	DefaultDeny bool   // EVOKORE_SECURITY_DEFAULT_DENY
	// ApprovalMode is EVOKORE_APPROVALS_MODE (auto, operator or token);
	// "" defers to mcp.config.json, then auto.
	ApprovalMode string
}

// ReadSettings reads the policy's variables; v collects what it cannot
// use.
func ReadSettings(v *config.Vars) Settings {
	return Settings{
		Role:         v.String("EVOKORE_ROLE"),
		DefaultDeny:  v.Bool("EVOKORE_SECURITY_DEFAULT_DENY"),
		ApprovalMode: strings.ToLower(v.String("EVOKORE_APPROVALS_MODE")),
	}
}
