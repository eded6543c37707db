package policy

import (
	"cmp"
	"log/slog"
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
		DefaultDeny:  v.StrictBool("EVOKORE_SECURITY_DEFAULT_DENY"),
		ApprovalMode: strings.ToLower(v.String("EVOKORE_APPROVALS_MODE")),
	}
}

// SessionRole is the role sessions run under unless their transport
// says otherwise: EVOKORE_ROLE, else perms' active_role; "" for none.
func (s Settings) SessionRole(perms *config.Permissions) string {
	return cmp.Or(s.Role, perms.ActiveRole)
}

// ApprovalModeFor is the approvals mode to run with under cfg:
// EVOKORE_APPROVALS_MODE, else cfg's approvals.mode, else "" (ModeAuto).
// A project's own config (untrusted) may make approvals stricter, never
// hand the model its tokens, so its "token" is ignored. A mode that is
// none of the three (a typo) is operator, the strict choice: it must not
// fail open. log hears of either.
func (s Settings) ApprovalModeFor(cfg *config.MCPConfig, untrusted bool, log *slog.Logger) string {
	mode := s.ApprovalMode
	if mode == "" {
		mode = cfg.Approvals.Mode
		if mode == ModeToken && untrusted {
			log.Info("[EVOKORE] Ignoring approvals.mode \"token\" of an untrusted project directory. Run 'evokore trust' there to honour it.", "config", cfg.File)
			mode = ""
		}
	}
	if mode != "" && !ValidMode(mode) {
		log.Info("[EVOKORE] Unknown approvals mode; using the strict choice", "mode", mode, "using", ModeOperator)
		mode = ModeOperator
	}
	return mode
}
