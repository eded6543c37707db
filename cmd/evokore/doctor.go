package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/connect"
	"github.com/evokore/evokore/internal/dashboard"
	"github.com/evokore/evokore/internal/doctor"
	"github.com/evokore/evokore/internal/jsonenc"
	"github.com/evokore/evokore/internal/voice"
)

func newDoctor(p *paths) *cobra.Command {
	var bootTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the setup and say how to fix each problem",
		Long: `doctor checks what a setup gets wrong and prints each problem with its fix:
the config and permissions (as 'evokore vet'), every child server's command
and a first boot of each (with the last lines it wrote to stderr when it
fails), node and npx or uvx when servers use them, a server that would start
evokore itself, whether EVOKORE_HOME is writable, whether the default ports
of 'serve --http', the dashboard and the voice sidecar are free, the project
directory's trust, the Claude Code hooks, and the clients evokore is
connected to.

The config checked is the one --config or EVOKORE_MCP_CONFIG_PATH names,
else ./mcp.config.json when there is one, else $EVOKORE_HOME/mcp.config.json
(the one 'evokore connect' sets clients to serve). The permissions checked
are the ones serve would read here: --permissions or
EVOKORE_PERMISSIONS_PATH, else ./permissions.yml when the directory is
trusted, else $EVOKORE_HOME/permissions.yml.

Exit 0 when every check passes (notes are advice), 1 when one does not.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The files checked are the ones serve would read here: the
			// permissions.yml is the project's only when it is trusted
			// (the trust check below says when it is not).
			s, _ := p.servingSettings()
			for _, path := range []*string{&s.Home, &s.PermissionsPath} {
				if abs, err := filepath.Abs(*path); err == nil {
					*path = abs
				}
			}
			cfgPath, from := s.ConfigPath, s.ConfigPathFrom
			if from == "" {
				if _, err := os.Stat(cfgPath); errors.Is(err, fs.ErrNotExist) {
					cfgPath = filepath.Join(s.Home, "mcp.config.json")
				}
			}
			if abs, err := filepath.Abs(cfgPath); err == nil {
				cfgPath = abs
			}
			httpSettings, _ := config.ReadHTTPSettings(s.Env)
			ports := []doctor.Port{{What: "evokore serve --http", Addr: httpSettings.Addr(), Setting: "EVOKORE_HTTP_PORT"}}
			if _, addr, _, err := dashboard.ReadOptions(s.Env, s.Home); err == nil {
				ports = append(ports, doctor.Port{What: "evokore dashboard", Addr: addr, Setting: "EVOKORE_DASHBOARD_PORT"})
			}
			ports = append(ports, doctor.Port{What: "evokore voice", Addr: strings.TrimPrefix(voice.URL(s.Env), "ws://"), Setting: "VOICE_SIDECAR_PORT"})
			wd, _ := os.Getwd()
			userDir, _ := os.UserHomeDir()
			children := s.Children
			if bootTimeout > 0 {
				children.Boot = bootTimeout
			}
			findings := doctor.Run(doctor.Options{
				Home: s.Home, Env: s.Env, ConfigPath: cfgPath, ConfigFrom: from,
				PermissionsPath: s.PermissionsPath, PermissionsFrom: s.PermissionsPathFrom, Children: children,
				Ports: ports, ProjectDir: wd, UserHome: userDir, Clients: clientStates(),
			})
			out := cmd.OutOrStdout()
			// Findings quote the project's files (a hook command in its
			// .claude/settings.json, server names) and children's stderr:
			// escaped, so a cloned repository cannot drive the terminal.
			for _, f := range findings {
				mark := "FAIL"
				switch {
				case f.OK:
					mark = "ok  "
				case f.Note:
					mark = "note"
				}
				fmt.Fprintf(out, "%s  %s\n", mark, jsonenc.Graphic(f.Text))
				for _, d := range f.Detail {
					fmt.Fprintf(out, "        | %s\n", jsonenc.Graphic(strings.ReplaceAll(d, "\t", "    ")))
				}
				if f.Fix != "" {
					fmt.Fprintf(out, "      fix: %s\n", jsonenc.Graphic(f.Fix))
				}
			}
			if n := doctor.Problems(findings); n > 0 {
				fmt.Fprintf(out, "%d problem(s)\n", n)
				return reported(1)
			}
			fmt.Fprintln(out, "all checks passed")
			return nil
		},
	}
	cmd.Flags().DurationVar(&bootTimeout, "boot-timeout", 0, "how long each child gets to boot (default $EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS, 30s)")
	return cmd
}

// clientStates reads every known client's user file, and ./.mcp.json
// when there is one.
func clientStates() []connect.State {
	var out []connect.State
	p := platform()
	for _, c := range connect.Clients {
		if file, err := c.Path(p); err == nil {
			out = append(out, connect.Inspect(c, file))
		}
	}
	if abs, err := filepath.Abs(".mcp.json"); err == nil {
		c, _ := connect.Lookup("claude-code")
		if s := connect.Inspect(c, abs); s.Found {
			out = append(out, s)
		}
	}
	return out
}
