package policy_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/policy"
)

func TestSessionRoleIsTheEnvironmentsElseTheFilesActiveRole(t *testing.T) {
	perms := &config.Permissions{ActiveRole: "developer"}
	if got := (policy.Settings{}).SessionRole(perms); got != "developer" {
		t.Errorf("no EVOKORE_ROLE: %q", got)
	}
	if got := (policy.Settings{Role: "readonly"}).SessionRole(perms); got != "readonly" {
		t.Errorf("EVOKORE_ROLE=readonly: %q", got)
	}
	if got := (policy.Settings{}).SessionRole(&config.Permissions{}); got != "" {
		t.Errorf("neither: %q", got)
	}
}

// The environment's approvals mode wins over the config's; an untrusted
// project's config cannot choose token, and an unknown mode (a typo) is
// the strict choice, operator, not auto.
func TestApprovalModeFor(t *testing.T) {
	for _, tc := range []struct {
		env, file string
		untrusted bool
		want, log string
	}{
		{"", "", false, "", ""},
		{"", policy.ModeOperator, false, policy.ModeOperator, ""},
		{policy.ModeOperator, policy.ModeToken, false, policy.ModeOperator, ""},
		{"", policy.ModeToken, false, policy.ModeToken, ""},
		{"", policy.ModeToken, true, "", "of an untrusted project directory"},
		{policy.ModeToken, "", true, policy.ModeToken, ""}, // the environment is the user's own
		{"", policy.ModeOperator, true, policy.ModeOperator, ""},
		{"operater", "", false, policy.ModeOperator, "Unknown approvals mode"},
		{"", "sometimes", false, policy.ModeOperator, "Unknown approvals mode"},
	} {
		var buf bytes.Buffer
		cfg := &config.MCPConfig{File: "mcp.config.json", Approvals: config.Approvals{Mode: tc.file}}
		got := policy.Settings{ApprovalMode: tc.env}.ApprovalModeFor(cfg, tc.untrusted, slog.New(slog.NewTextHandler(&buf, nil)))
		if got != tc.want || (tc.log == "") != (buf.Len() == 0) || !strings.Contains(buf.String(), tc.log) {
			t.Errorf("env %q, file %q, untrusted %v: %q, logged %q; want %q, logging %q", tc.env, tc.file, tc.untrusted, got, buf.String(), tc.want, tc.log)
		}
	}
}
