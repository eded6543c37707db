package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/hooks"
	"github.com/evokore/evokore/internal/replay"
)

// newHook is `evokore hook <event>`: the programs Claude Code runs.
func newHook() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook <name>",
		Short: "Run one Claude Code hook (payload JSON on stdin)",
		Long: `Claude Code runs these around a session; 'evokore hooks install' wires them
into settings.json. Each reads the hook payload JSON on stdin and records
the session under EVOKORE_HOME. Every hook exits 0 on an internal error
(logged to EVOKORE_HOME/logs/hooks.jsonl), except the decisions that exist
to block: damage-control's block and tilldone's refusal to stop (exit 2,
the reason on stderr). An unknown hook name is logged and exits 0 too, so
settings written by another evokore version never block a session.`,
		Args:               cobra.ArbitraryArgs,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || args[0] == "--help" || args[0] == "-h" {
				return cmd.Help()
			}
			wd, _ := os.Getwd()
			hooks.Run(args[0], hooks.Env{Home: userHome(), Stderr: cmd.ErrOrStderr(), Getenv: os.Getenv, Dir: wd})
			return nil
		},
	}
	for _, name := range hooks.Names() {
		cmd.AddCommand(&cobra.Command{
			Use:   name,
			Short: "The " + name + " hook",
			Args:  cobra.ArbitraryArgs,
			// Flags are not parsed: Claude Code passes none, and a hook
			// must not fail on what it does not expect.
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, _ []string) error {
				wd, _ := os.Getwd()
				code := hooks.Run(name, hooks.Env{
					Home: userHome(), Stdin: cmd.InOrStdin(), Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr(),
					Getenv: os.Getenv, Dir: wd,
				})
				if code != 0 {
					return reported(code)
				}
				return nil
			},
		})
	}
	return cmd
}

// newStatusLine is `evokore status-line`, Claude Code's statusLine command.
func newStatusLine() *cobra.Command {
	return &cobra.Command{
		Use:                "status-line",
		Short:              "Print the Claude Code status line (payload JSON on stdin)",
		Args:               cobra.ArbitraryArgs,
		DisableFlagParsing: true,
		Run: func(cmd *cobra.Command, _ []string) {
			hooks.StatusLine(userHome(), cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
}

// newHooks is `evokore hooks install|uninstall|verify`.
func newHooks() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install evokore's hooks into Claude Code's settings.json",
		Args:  cobra.NoArgs,
	}
	var project, user, dryRun, sandbox bool
	var exe string
	settingsFor := func() (hooks.Settings, error) {
		if project && user {
			return hooks.Settings{}, &exitError{2, errors.New("--project and --user exclude each other")}
		}
		var path string
		if user {
			home, err := os.UserHomeDir()
			if err != nil {
				return hooks.Settings{}, &exitError{1, err}
			}
			path = filepath.Join(home, ".claude", "settings.json")
		} else {
			wd, err := os.Getwd()
			if err != nil {
				return hooks.Settings{}, &exitError{1, err}
			}
			path = filepath.Join(wd, ".claude", "settings.json")
		}
		if exe == "" {
			self, err := os.Executable()
			if err != nil {
				return hooks.Settings{}, &exitError{1, err}
			}
			if resolved, err := filepath.EvalSymlinks(self); err == nil {
				self = resolved
			}
			exe = self
		}
		s := hooks.Settings{Path: path, Exe: exe, Now: time.Now}
		if sandbox {
			if err := withSandbox(&s); err != nil {
				return hooks.Settings{}, err
			}
		}
		return s, nil
	}
	apply := func(install bool) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			s, err := settingsFor()
			if err != nil {
				return err
			}
			plan := s.Uninstall
			if install {
				plan = s.Install
			}
			c, err := plan()
			if err != nil {
				return &exitError{1, err}
			}
			return applySettings(cmd.OutOrStdout(), s, c, dryRun, sandbox)
		}
	}
	for _, sub := range []*cobra.Command{
		{Use: "install", Short: "Wire evokore's hooks and status line into settings.json (merging, idempotent, with a backup)", Args: cobra.NoArgs, RunE: apply(true)},
		{Use: "uninstall", Short: "Remove evokore's hooks and status line from settings.json", Args: cobra.NoArgs, RunE: apply(false)},
	} {
		fl := sub.Flags()
		fl.BoolVar(&project, "project", false, "edit ./.claude/settings.json (the default)")
		fl.BoolVar(&user, "user", false, "edit ~/.claude/settings.json")
		fl.BoolVar(&dryRun, "dry-run", false, "print the change as a diff and write nothing")
		fl.StringVar(&exe, "command", "", "the evokore executable the hooks run (default: this one)")
		if sub.Use == "install" {
			fl.BoolVar(&sandbox, "sandbox", false, "also confine Claude Code's shell in its sandbox, away from EVOKORE_HOME, the approval secrets and this machine's network (the diff is shown first)")
		}
		cmd.AddCommand(sub)
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "verify <session-id>",
		Short: "Check the hash chain of a session's evidence file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := replay.EvidencePath(userHome(), args[0])
			n, err := hooks.VerifyEvidence(path)
			if err != nil {
				return &exitError{1, fmt.Errorf("%s: %w (after %d good links)", path, err, n)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d links, chain intact\n", path, n)
			return nil
		},
	})
	return cmd
}

// withSandbox sets s to turn on Claude Code's sandbox for EVOKORE_HOME.
func withSandbox(s *hooks.Settings) error {
	home, err := filepath.Abs(userHome())
	if err != nil {
		return &exitError{1, err}
	}
	sb := hooks.SandboxFor(home, os.Getenv("EVOKORE_APPROVAL_KEY_FILE"))
	s.Sandbox = &sb
	s.UserHome, _ = os.UserHomeDir()
	return nil
}

// applySettings prints a dry run's diff, or writes the change; a change
// to the sandbox is shown as a diff before it is written.
func applySettings(out io.Writer, s hooks.Settings, c *hooks.Change, dryRun, showDiff bool) error {
	if dryRun || (showDiff && c.Changed) {
		if c.Changed {
			fmt.Fprint(out, hooks.Diff(s.Path, c.Before, c.After))
		} else {
			fmt.Fprintf(out, "%s: no change\n", s.Path)
		}
		if dryRun {
			return nil
		}
	}
	if err := s.Apply(c); err != nil {
		return &exitError{1, err}
	}
	switch {
	case !c.Changed:
		fmt.Fprintf(out, "%s: already up to date\n", s.Path)
	case c.Backup != "":
		fmt.Fprintf(out, "%s: updated (previous version in %s)\n", s.Path, c.Backup)
	default:
		fmt.Fprintf(out, "%s: written\n", s.Path)
	}
	return nil
}

// sandboxClaudeCode is connect claude-code --sandbox: Claude Code's
// sandbox turned on in the user's settings (the project's with
// --project), the hooks left as they are.
func sandboxClaudeCode(out io.Writer, project, dryRun bool) error {
	dir, err := os.UserHomeDir()
	if project {
		dir, err = os.Getwd()
	}
	if err != nil {
		return &exitError{1, err}
	}
	s := hooks.Settings{Path: filepath.Join(dir, ".claude", "settings.json"), Now: time.Now}
	if err := withSandbox(&s); err != nil {
		return err
	}
	c, err := s.EnableSandbox()
	if err != nil {
		return &exitError{1, err}
	}
	return applySettings(out, s, c, dryRun, true)
}
