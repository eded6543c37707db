package records

import "github.com/evokore/evokore/internal/config"

// Settings are the switches of the records: which sinks to keep and how.
type Settings struct {
	// AuditLog is EVOKORE_AUDIT_LOG, on unless set false; AuditMaxBytes
	// (EVOKORE_AUDIT_MAX_BYTES) and AuditKeep (EVOKORE_AUDIT_KEEP) shape
	// its rotation.
	AuditLog      bool
	AuditMaxBytes int64
	AuditKeep     int
	// Webhooks is EVOKORE_WEBHOOKS_ENABLED: on unless set false, so the
	// webhooks of a trusted mcp.config.json are posted to.
	// WebhooksAllowPrivate is EVOKORE_WEBHOOKS_ALLOW_PRIVATE.
	Webhooks             bool
	WebhooksAllowPrivate bool
	// SessionReplay is EVOKORE_SESSION_REPLAY: on unless set false, the
	// router records its own sessions under <Home>/sessions.
	SessionReplay bool
}

// ReadSettings reads the records' variables; v collects what it cannot
// use.
func ReadSettings(v *config.Vars) Settings {
	return Settings{
		AuditLog:             v.Bool("EVOKORE_AUDIT_LOG"),
		AuditMaxBytes:        int64(v.Positive("EVOKORE_AUDIT_MAX_BYTES")),
		AuditKeep:            v.Positive("EVOKORE_AUDIT_KEEP"),
		Webhooks:             v.Bool("EVOKORE_WEBHOOKS_ENABLED"),
		WebhooksAllowPrivate: v.Bool("EVOKORE_WEBHOOKS_ALLOW_PRIVATE"),
		SessionReplay:        v.Bool("EVOKORE_SESSION_REPLAY"),
	}
}
