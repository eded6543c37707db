// Command evokore is an MCP router: one MCP server in front of many.
//
// Usage:
//
//	evokore [serve]            serve MCP over stdio (the default); --http ADDR serves streamable HTTP
//	evokore vet                check mcp.config.json, permissions.yml and skills, for CI
//	evokore profile NAME       preview a discovery profile's tool list and its token cost (--all: every profile)
//	evokore approvals          list, approve or deny the calls running routers hold for a human
//	evokore pins               review and accept tools held because a child changed them
//	evokore trust [DIR]        let a project directory's files set security settings
//	evokore dashboard          serve the session dashboard
//	evokore voice              run the voice sidecar (voice say "TEXT" sends it one utterance)
//	evokore hook <name>        run one Claude Code hook (payload on stdin)
//	evokore hooks install      wire the hooks and the status line into Claude Code's settings.json
//	evokore connect CLIENT     add evokore to an MCP client and --import its servers
//	evokore disconnect CLIENT  take evokore out of a client and give it back its servers
//	evokore auth login|status|logout SERVER  sign evokore in to a remote child that needs OAuth
//	evokore doctor             check the setup and say how to fix each problem
//	evokore status-line        print the Claude Code status line (payload on stdin)
//	evokore version            print the version
//
// Every command takes --config, --permissions and --skills. Exit codes: 0
// success; 1 failure (vet found errors, the server could not start); 2 bad
// usage.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/buildinfo"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native/codemode"
	"github.com/evokore/evokore/internal/server"
	"github.com/evokore/evokore/internal/trust"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); builds
// from a module version report that instead of "dev".
var version = "dev"

func buildVersion() string { return buildinfo.Version(version) }

// exitError carries a process exit code through cobra. A nil err means
// the command already said what went wrong (vet's diagnostics, a hook's
// own output), so main adds nothing to stderr.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// reported is the exit of a command that has already shown its failure.
func reported(code int) *exitError { return &exitError{code: code} }

// paths are the file locations every command accepts.
type paths struct {
	config, permissions, skills string
	// projectPerms and projectConfig are set by servingSettings when no
	// flag or variable names the file, so the project directory's own is
	// read, subject to trust.
	projectPerms, projectConfig bool
}

// settings reads .env and the EVOKORE_* variables, then applies the flags.
// vet and profile read the project's files as they are: they only report.
func (p *paths) settings() (config.Settings, []string) {
	env, ds := config.LoadEnv(".env")
	return p.apply(env, ds, nil)
}

// servingSettings are the settings a router runs with. The project
// directory the client started it in is not trusted to weaken the user's
// policy: its .env's security settings, its permissions.yml and a token
// approvals mode in its mcp.config.json count only after `evokore trust`
// recorded their content. What is ignored is said on stderr.
func (p *paths) servingSettings() (config.Settings, []string) {
	home := userHome()
	envTrusted := trust.Trusted(home, ".", ".env")
	env, ds, ignored := config.LoadProjectEnv(".env", envTrusted)
	var notes []string
	if len(ignored) > 0 {
		notes = append(notes, fmt.Sprintf("[EVOKORE] Ignoring security settings in ./.env (%s): the project directory is not trusted. Run 'evokore trust' there to honour them.", strings.Join(ignored, ", ")))
	}
	s, warnings := p.apply(env, ds, notes)
	real := config.ProcessEnv()
	_, permsSet := real.Lookup("EVOKORE_PERMISSIONS_PATH")
	_, configSet := real.Lookup("EVOKORE_MCP_CONFIG_PATH")
	p.projectPerms = !permsSet && p.permissions == "" && !(envTrusted && env.Get("EVOKORE_PERMISSIONS_PATH") != "")
	p.projectConfig = !configSet && p.config == "" && env.Get("EVOKORE_MCP_CONFIG_PATH") == ""
	s, more := p.settleProjectFiles(s)
	return s, append(warnings, more...)
}

// settleProjectFiles applies the trust record, as it is now, to the
// project directory's permissions.yml and mcp.config.json: an untrusted
// permissions.yml is replaced by the user's own, an untrusted
// mcp.config.json may not choose token approvals. Serving runs it at
// start and again at every reload, so a file edited after `evokore trust`
// loses its trust on the next reload as it would on the next start, and
// no reload trusts more than a restart would.
func (p *paths) settleProjectFiles(s config.Settings) (config.Settings, []string) {
	home := userHome()
	var warnings []string
	if p.projectPerms {
		s.PermissionsPath = "permissions.yml"
		if _, err := os.Stat("permissions.yml"); err == nil && !trust.Trusted(home, ".", "permissions.yml") {
			warnings = append(warnings, "[EVOKORE] Ignoring ./permissions.yml: the project directory is not trusted to set roles and rules. Run 'evokore trust' there to honour it.")
			s.PermissionsPath = filepath.Join(s.Home, "permissions.yml")
		} else if err != nil {
			s.PermissionsPath = filepath.Join(s.Home, "permissions.yml")
		}
	}
	if p.projectConfig {
		s.UntrustedConfig = !trust.Trusted(home, ".", "mcp.config.json")
	}
	return s, warnings
}

func (p *paths) apply(env config.Env, ds config.Diagnostics, warnings []string) (config.Settings, []string) {
	s, more := config.ReadSettings(env, server.ShippedDefaults)
	warnings = append(warnings, more...)
	// The packages the server composes read their own variables when it
	// is built; what they cannot use is said here, at start, with the rest.
	_, more = server.ReadPartSettings(env)
	warnings = append(warnings, more...)
	for _, d := range ds {
		warnings = append(warnings, d.String())
	}
	if p.config != "" {
		s.ConfigPath, s.ConfigPathFrom = p.config, "--config"
	}
	if p.permissions != "" {
		s.PermissionsPath, s.PermissionsPathFrom = p.permissions, "--permissions"
	}
	if p.skills != "" {
		s.SkillsDir = p.skills
	}
	return s, warnings
}

// userHome is EVOKORE_HOME from the real environment (a project's .env
// cannot move it), else ~/.evokore.
func userHome() string {
	s, _ := config.ReadSettings(config.ProcessEnv(), server.ShippedDefaults)
	return s.Home
}

func newRoot() *cobra.Command {
	p := &paths{}
	serve := newServe(p)
	root := &cobra.Command{
		Use:   "evokore",
		Short: "An MCP router: one stdio MCP server in front of many",
		Long: `evokore serves its own tools and the tools of the child MCP servers in
mcp.config.json over one MCP connection, projected through discovery
profiles and guarded by roles, approvals, rate limits and cooldowns.

Without a subcommand it serves MCP over stdio.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          serve.RunE,
	}
	fl := root.PersistentFlags()
	fl.StringVar(&p.config, "config", "", "mcp.config.json to read (default $EVOKORE_MCP_CONFIG_PATH or ./mcp.config.json)")
	fl.StringVar(&p.permissions, "permissions", "", "permissions.yml to read (default $EVOKORE_PERMISSIONS_PATH or ./permissions.yml)")
	fl.StringVar(&p.skills, "skills", "", "skills directory (default $EVOKORE_SKILLS_DIR or ./SKILLS)")
	root.AddCommand(serve, newVet(p), newProfile(p), newApprovals(p), newPins(p), newTrust(), newConnect(p), newDisconnect(p), newDoctor(p), newAuth(p), newVoice(), newHook(), newHooks(), newStatusLine(), newDashboard(p), newVersion())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{2, err} })
	return root
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "evokore %s\n", buildVersion())
		},
	}
}

func main() {
	// run_code's sandbox is this binary started with a hidden argument
	// (internal/native/codemode): no command, flag or file applies to it.
	if codemode.IsSandbox(os.Args) {
		os.Exit(codemode.Sandbox(os.Stdin, os.Stdout))
	}
	err := newRoot().Execute()
	if err == nil {
		return
	}
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode is the process exit code for err, after saying on w what went
// wrong unless the command already did.
func exitCode(err error, w io.Writer) int {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(w, "evokore:", err)
		}
		return ee.code
	}
	fmt.Fprintln(w, "evokore:", err)
	if isUsage(err) {
		return 2
	}
	return 1
}

// isUsage recognises cobra's argument and command errors.
func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
