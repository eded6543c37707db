package policy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// A nested evokore's natives (its run_code listed here as me2_run_code)
// are bound by the rules written for the natives, when those are
// stricter than the rules for the listed name: a flat rule, a role's
// override, a shipped role's matrix. A rule that names the listed tool
// itself still holds where it is stricter, a role's default names no
// native, and a child's tool that is no native's namesake is not touched.
func TestRulesForANativeBindANestedRoutersNative(t *testing.T) {
	perms := &config.Permissions{
		Rules: map[string]string{"run_code": config.LevelDeny, "execute_skill": config.LevelRequireApproval,
			"me2_memory_store": config.LevelDeny},
		Roles: append(ShippedPermissions().Roles,
			config.Role{Name: "strict", DefaultPermission: config.LevelDeny, Overrides: map[string]string{"me2_fleet_spawn": config.LevelAllow}},
			config.Role{Name: "custom", DefaultPermission: config.LevelAllow, Overrides: map[string]string{"fleet_spawn": config.LevelRequireApproval}}),
	}
	p := New(Options{Permissions: perms, ApprovalTTL: time.Minute, Home: t.TempDir()})
	proxied := func(name string) *catalog.Entry {
		return catalog.NewProxyEntry("me2", &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}})
	}
	level := func(role string, e *catalog.Entry) string {
		c := &router.Call{Entry: e, Session: session.New("s", role)}
		_, err := p.Stages().Permission.Check(context.Background(), c)
		switch {
		case err != nil && strings.Contains(err.Error(), "denied"):
			return "deny"
		case err != nil:
			return err.Error()
		case c.NeedsApproval:
			return "require_approval"
		}
		return "allow"
	}
	for _, c := range []struct {
		role, tool, want string
	}{
		{"", "run_code", "deny"},                         // the flat rule for the native
		{"", "execute_skill", "require_approval"},        // the flat rule for the native
		{"", "memory_store", "deny"},                     // the rule for the listed name, stricter
		{"", "fleet_status", "allow"},                    // no rule names either
		{"", "not_a_native", "allow"},                    // no native's namesake
		{"readonly", "run_code", "deny"},                 // the shipped matrix
		{"developer", "fleet_spawn", "require_approval"}, // the shipped matrix over the role's default
		{"admin", "run_code", "deny"},                    // a flat deny holds under a role
		{"custom", "fleet_spawn", "require_approval"},    // the role's override for the native
		{"strict", "fleet_spawn", "allow"},               // the role's override of the listed name; its default names no native
		{"strict", "worker_dispatch", "deny"},            // the role's default for the listed name
		{"developer", "memory_store", "deny"},            // a flat deny of the listed name holds under a role
	} {
		if got := level(c.role, proxied(c.tool)); got != c.want {
			t.Errorf("role %q, me2_%s: %s, want %s", c.role, c.tool, got, c.want)
		}
	}
}
