package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
)

// JWT mode always has an audience to check unless the operator wrote the
// word unsafe: the configured one, else this server's resource URL.
func TestJWTAudienceIsRequired(t *testing.T) {
	cases := []struct {
		name         string
		env          map[string]string
		listen       string
		aud, res     string
		wantErr      bool
		wantWarnings int
	}{
		{"configured audience", map[string]string{"EVOKORE_OAUTH_AUDIENCE": "evokore"}, "0.0.0.0:0", "evokore", "", false, 0},
		{"resource is the audience", map[string]string{"EVOKORE_OAUTH_RESOURCE": "https://mcp.example.com/mcp"}, "0.0.0.0:3100", "https://mcp.example.com/mcp", "https://mcp.example.com/mcp", false, 0},
		{"the listen address names the resource", nil, "127.0.0.1:3100", "http://127.0.0.1:3100/mcp", "http://127.0.0.1:3100/mcp", false, 0},
		{"a wildcard address names nothing", nil, "0.0.0.0:3100", "", "", true, 0},
		{"an ephemeral port names nothing", nil, "127.0.0.1:0", "", "", true, 0},
		{"no host names nothing", nil, ":3100", "", "", true, 0},
		{"true is not the opt-out", map[string]string{config.AnyAudienceVar: "true"}, "0.0.0.0:3100", "", "", true, 1},
		{"unsafe is the opt-out", map[string]string{config.AnyAudienceVar: "unsafe"}, "0.0.0.0:3100", "", "", false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs, warnings := config.ReadHTTPSettings(config.NewEnv(c.env))
			if len(warnings) != c.wantWarnings {
				t.Errorf("warnings = %q", warnings)
			}
			got, err := hs.ForJWT(c.listen)
			if c.wantErr {
				if !errors.Is(err, config.ErrNoAudience) || !strings.Contains(err.Error(), "EVOKORE_OAUTH_AUDIENCE") {
					t.Fatalf("ForJWT = %+v, %v; want ErrNoAudience", got, err)
				}
				return
			}
			if err != nil || got.Audience != c.aud || got.Resource != c.res {
				t.Errorf("ForJWT = audience %q resource %q, %v; want %q %q", got.Audience, got.Resource, err, c.aud, c.res)
			}
		})
	}
}

// A misspelt switch that guards the HTTP endpoint takes the strict
// choice: authentication required, sessions scoped to their tenant.
func TestMisspeltGuardsOfTheHTTPEndpointHold(t *testing.T) {
	hs, warnings := config.ReadHTTPSettings(config.NewEnv(map[string]string{
		"EVOKORE_AUTH_REQUIRED": "ture", "EVOKORE_TENANT_SCOPING": "yes please"}))
	if !hs.AuthRequired || !hs.TenantScoping {
		t.Errorf("auth required %v, tenant scoping %v: a misspelt guard read as off", hs.AuthRequired, hs.TenantScoping)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "the strict choice") {
		t.Errorf("warnings: %q", warnings)
	}
}
