package config_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
)

// writeTemp writes src to name in a fresh temporary directory.
func writeTemp(b *testing.B, name, src string) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// config50 is an mcp.config.json with 50 servers, each with args, env and
// a rate limit, alternating the two rateLimit forms, plus one profile.
func config50() string {
	var sb strings.Builder
	sb.WriteString("{\n  \"servers\": {\n")
	for i := range 50 {
		if i > 0 {
			sb.WriteString(",\n")
		}
		rate := fmt.Sprintf(`{"requestsPerMinute": %d, "toolLimits": {"write": 5, "search": {"maxTokens": 3, "refillIntervalMs": 2000}}}`, 30+i)
		if i%2 == 1 {
			rate = fmt.Sprintf(`{"maxTokens": %d, "refillRate": 2, "refillIntervalMs": 500}`, 5+i)
		}
		fmt.Fprintf(&sb, `    "server_%02d": {
      "command": "npx",
      "args": ["-y", "@example/mcp-server-%02d", "--port", "%d", "--root=${WORKSPACE_%02d}"],
      "env": {"API_KEY": "${API_KEY_%02d}", "MODE": "both", "LOG_LEVEL": "info"},
      "cwd": "./servers/%02d",
      "description": "generated server number %d",
      "rateLimit": %s
    }`, i, i, 9000+i, i, i, i, i, rate)
	}
	sb.WriteString("\n  },\n  \"discovery\": {\"profiles\": {\"bench\": {\"alwaysVisible\": [\"discover_tools\", \"server_00_write\"]}}},\n  \"skillRegistries\": []\n}\n")
	return sb.String()
}

func BenchmarkLoadMCPConfig50(b *testing.B) {
	path := writeTemp(b, "mcp.config.json", config50())
	b.ReportAllocs()
	for b.Loop() {
		cfg, err := config.LoadMCPConfig(path)
		if err != nil {
			b.Fatal(err)
		}
		if len(cfg.Servers) != 50 || cfg.Servers[49].RateLimit == nil || len(cfg.Servers[0].Env) != 3 {
			b.Fatalf("decoded %d servers", len(cfg.Servers))
		}
	}
}

// permissions500 is a permissions.yml with 500 flat rules and 3 roles.
func permissions500() string {
	levels := []string{"allow", "require_approval", "deny"}
	var sb strings.Builder
	sb.WriteString(`roles:
  admin:
    description: everything
    default_permission: allow
  developer:
    description: writes need approval
    default_permission: require_approval
    overrides:
      server_00_read: allow
      server_01_read: allow
      server_02_delete: deny
  readonly:
    description: reads only
    default_permission: deny
    overrides:
      server_00_read: allow
      server_01_read: allow
rules:
`)
	for i := range 500 {
		fmt.Fprintf(&sb, "  server_%02d_tool_%03d: %s\n", i%25, i, levels[i%3])
	}
	return sb.String()
}

func BenchmarkLoadPermissions500(b *testing.B) {
	path := writeTemp(b, "permissions.yml", permissions500())
	b.ReportAllocs()
	for b.Loop() {
		p, err := config.LoadPermissions(path, config.Permissions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Rules) != 500 || len(p.Roles) != 3 {
			b.Fatalf("decoded %d rules, %d roles", len(p.Rules), len(p.Roles))
		}
	}
}

// BenchmarkParseLargeClaudeJSON reads a ~/.claude.json-sized file: a
// megabyte of another client's project history beside one mcpServers
// entry, which must not be parsed.
func BenchmarkParseLargeClaudeJSON(b *testing.B) {
	projects := map[string]any{}
	for i := range 300 {
		var history []any
		for j := range 50 {
			history = append(history, map[string]any{"display": fmt.Sprintf("prompt %d of project %d, long enough to look like a real one", j, i)})
		}
		projects[fmt.Sprintf("/home/u/p%d", i)] = map[string]any{"history": history, "allowedTools": []string{"a"}}
	}
	src, err := json.Marshal(map[string]any{"projects": projects, "mcpServers": map[string]any{"a": map[string]any{"type": "stdio", "command": "x"}}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if cfg, ds := config.ParseMCPConfig("claude.json", src); ds != nil || len(cfg.Servers) != 1 {
			b.Fatal(ds)
		}
	}
}
