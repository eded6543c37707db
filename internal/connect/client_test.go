package connect

import "testing"

// TestClientPathsPerPlatform pins where each client's user file is on
// Linux, macOS and Windows, from the environment alone.
func TestClientPathsPerPlatform(t *testing.T) {
	env := map[string]map[string]string{
		"linux":   {"HOME": "/home/u"},
		"darwin":  {"HOME": "/Users/u"},
		"windows": {"USERPROFILE": `C:\Users\u`, "APPDATA": `C:\Users\u\AppData\Roaming`},
	}
	want := map[string]map[string]string{
		"claude-code":    {"linux": "/home/u/.claude.json", "darwin": "/Users/u/.claude.json", "windows": `C:\Users\u\.claude.json`},
		"claude-desktop": {"linux": "/home/u/.config/Claude/claude_desktop_config.json", "darwin": "/Users/u/Library/Application Support/Claude/claude_desktop_config.json", "windows": `C:\Users\u\AppData\Roaming\Claude\claude_desktop_config.json`},
		"cursor":         {"linux": "/home/u/.cursor/mcp.json", "darwin": "/Users/u/.cursor/mcp.json", "windows": `C:\Users\u\.cursor\mcp.json`},
		"vscode":         {"linux": "/home/u/.config/Code/User/mcp.json", "darwin": "/Users/u/Library/Application Support/Code/User/mcp.json", "windows": `C:\Users\u\AppData\Roaming\Code\User\mcp.json`},
		"windsurf":       {"linux": "/home/u/.codeium/windsurf/mcp_config.json", "darwin": "/Users/u/.codeium/windsurf/mcp_config.json", "windows": `C:\Users\u\.codeium\windsurf\mcp_config.json`},
		"codex":          {"linux": "/home/u/.codex/config.toml", "darwin": "/Users/u/.codex/config.toml", "windows": `C:\Users\u\.codex\config.toml`},
		"gemini":         {"linux": "/home/u/.gemini/settings.json", "darwin": "/Users/u/.gemini/settings.json", "windows": `C:\Users\u\.gemini\settings.json`},
	}
	for _, c := range Clients {
		for goos, vars := range env {
			got, err := c.Path(Platform{GOOS: goos, Getenv: func(k string) string { return vars[k] }})
			if err != nil || got != want[c.Name][goos] {
				t.Errorf("%s on %s: %q, %v; want %q", c.Name, goos, got, err, want[c.Name][goos])
			}
		}
	}
	// XDG_CONFIG_HOME moves the Linux application folder; CODEX_HOME moves Codex's.
	xdg := Platform{GOOS: "linux", Getenv: func(k string) string {
		return map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg", "CODEX_HOME": "/codex"}[k]
	}}
	for name, want := range map[string]string{"vscode": "/cfg/Code/User/mcp.json", "claude-desktop": "/cfg/Claude/claude_desktop_config.json", "codex": "/codex/config.toml"} {
		c, _ := Lookup(name)
		if got, _ := c.Path(xdg); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
