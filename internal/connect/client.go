package connect

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Format is how a client's file is written.
type Format int

// The formats of the clients' files.
const (
	JSON Format = iota
	TOML
)

// Client is an MCP client evokore can connect to.
type Client struct {
	// Name is what the commands take: claude-code, cursor, ...
	Name  string
	Title string
	// Format and Key: the servers are the members of the top-level
	// object Key (JSON), or the [Key.NAME] tables (TOML).
	Format Format
	Key    string
	// Typed clients want "type": "stdio" in a stdio entry.
	Typed bool
	// Comments and TrailingCommas are what the client accepts in its
	// JSON file beyond strict JSON; a file holding anything else it
	// would refuse is refused, with its place.
	Comments, TrailingCommas bool
	// vars is how the client writes a variable in its servers' values.
	vars syntax
	// passEnv names the variables evokore's entry passes from the
	// client's environment, for a client that starts its servers with
	// only part of it (nil: the client passes its whole environment).
	passEnv func(e *stdioEntry, names []string)
	// Project is the file --project edits, relative to the working
	// directory; "" when the client has no project file evokore edits.
	Project string
	// path is the user file on a platform.
	path func(p Platform) (string, error)
}

// Platform is what locates a user's files: the operating system
// (runtime.GOOS) and the environment, so tests and other platforms'
// paths never depend on the machine they are computed on.
type Platform struct {
	GOOS   string
	Getenv func(string) string
}

func (p Platform) home() (string, error) {
	v := "HOME"
	if p.GOOS == "windows" {
		v = "USERPROFILE"
	}
	h := p.Getenv(v)
	if h == "" {
		return "", fmt.Errorf("$%s is not set, so the client's file cannot be found", v)
	}
	return h, nil
}

// join builds a path with the platform's separator.
func (p Platform) join(parts ...string) string {
	if p.GOOS == "windows" {
		return strings.Join(parts, `\`)
	}
	return filepath.Join(parts...)
}

// underHome is a file at the same place under the home directory on
// every platform.
func underHome(rel ...string) func(Platform) (string, error) {
	return func(p Platform) (string, error) {
		h, err := p.home()
		if err != nil {
			return "", err
		}
		return p.join(append([]string{h}, rel...)...), nil
	}
}

// appConfig is a file under the platform's per-user application
// settings folder: %APPDATA% on Windows, ~/Library/Application Support
// on macOS, $XDG_CONFIG_HOME (default ~/.config) elsewhere.
func appConfig(rel ...string) func(Platform) (string, error) {
	return func(p Platform) (string, error) {
		var base string
		switch p.GOOS {
		case "windows":
			base = p.Getenv("APPDATA")
			if base == "" {
				return "", errors.New("%APPDATA% is not set, so the client's file cannot be found")
			}
		case "darwin":
			h, err := p.home()
			if err != nil {
				return "", err
			}
			base = p.join(h, "Library", "Application Support")
		default:
			base = p.Getenv("XDG_CONFIG_HOME")
			if base == "" || !filepath.IsAbs(base) {
				h, err := p.home()
				if err != nil {
					return "", err
				}
				base = p.join(h, ".config")
			}
		}
		return p.join(append([]string{base}, rel...)...), nil
	}
}

// Clients are the clients evokore knows, in the order --list shows them.
var Clients = []Client{
	{Name: "claude-code", Title: "Claude Code", Key: "mcpServers", Typed: true, Project: ".mcp.json", vars: claudeVars, path: underHome(".claude.json")},
	{Name: "claude-desktop", Title: "Claude Desktop", Key: "mcpServers", path: appConfig("Claude", "claude_desktop_config.json")},
	{Name: "cursor", Title: "Cursor", Key: "mcpServers", vars: editorVars, path: underHome(".cursor", "mcp.json")},
	{Name: "vscode", Title: "VS Code", Key: "servers", Typed: true, Comments: true, TrailingCommas: true, vars: editorVars, path: appConfig("Code", "User", "mcp.json")},
	{Name: "windsurf", Title: "Windsurf", Key: "mcpServers", vars: editorVars, path: underHome(".codeium", "windsurf", "mcp_config.json")},
	{Name: "codex", Title: "Codex", Format: TOML, Key: "mcp_servers", passEnv: codexPassEnv, path: codexPath},
	{Name: "gemini", Title: "Gemini CLI", Key: "mcpServers", Comments: true, vars: geminiVars, passEnv: geminiPassEnv, path: underHome(".gemini", "settings.json")},
}

// codexPath is $CODEX_HOME/config.toml, Codex's own override, else
// ~/.codex/config.toml.
func codexPath(p Platform) (string, error) {
	if h := p.Getenv("CODEX_HOME"); h != "" {
		return p.join(h, "config.toml"), nil
	}
	return underHome(".codex", "config.toml")(p)
}

// Lookup finds a client by name.
func Lookup(name string) (Client, error) {
	var names []string
	for _, c := range Clients {
		if c.Name == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return Client{}, fmt.Errorf("unknown client %q; the clients are: %s", name, strings.Join(names, ", "))
}

// Path is the client's user file on p.
func (c Client) Path(p Platform) (string, error) { return c.path(p) }
