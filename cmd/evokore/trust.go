package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/trust"
)

func newTrust() *cobra.Command {
	var revoke bool
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Let a project directory's .env, permissions.yml and mcp.config.json set security settings",
		Long: `A router started inside a project directory ignores what that directory says
about security (the role, permissions, plugins directory, private-address
opt-ins, sandbox and approvals modes, default-deny, EVOKORE_HOME), so a
hostile repository cannot raise its own privileges. 'evokore trust' records
the current content of DIR's .env, permissions.yml and mcp.config.json
(default: the current directory) in EVOKORE_HOME; they count while they keep
that content. Any edit lapses the trust until you run it again.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			// Messages name the directory absolutely: "No longer
			// trusting .." says nothing about which one.
			if abs, err := filepath.Abs(dir); err == nil {
				dir = abs
			}
			home := userHome()
			if revoke {
				was, err := trust.Revoke(home, dir)
				if err != nil {
					return &exitError{1, err}
				}
				if !was {
					fmt.Fprintf(cmd.OutOrStdout(), "%s was not trusted.\n", dir)
					return nil
				}
				fmt.Fprintf(cmd.OutOrStdout(), "No longer trusting %s.\n", dir)
				return nil
			}
			files, err := trust.Trust(home, dir)
			if err != nil {
				return &exitError{1, err}
			}
			if len(files) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "Trusting %s (it has none of %s yet; trust it again once it does).\n", dir, strings.Join(trust.Files, ", "))
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Trusting %s: %s.\n", dir, strings.Join(files, ", "))
			return nil
		},
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "forget the directory instead")
	return cmd
}
