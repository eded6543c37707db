package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/policy"
)

func newApprovals(p *paths) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List or deny the approvals a running router is waiting for",
		Long: `A tool whose level is require_approval is intercepted with a token the model
must bring back after asking the user. The router keeps the pending
approvals in pending-approvals.json under EVOKORE_HOME (ids and token
prefixes only). 'approvals deny ID' makes sure that approval never runs.`,
	}
	var format string
	list := &cobra.Command{
		Use:   "list",
		Short: "List pending approvals",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, _ := p.settings()
			pending, err := policy.ListPending(s.Home, time.Now())
			if err != nil {
				return &exitError{1, err}
			}
			if format == "json" {
				if pending == nil {
					pending = []policy.PendingApproval{}
				}
				return writeJSON(cmd.OutOrStdout(), pending)
			}
			if len(pending) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No pending approvals.")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTOOL\tTOKEN\tCREATED\tEXPIRES\tSTATUS")
			for _, a := range pending {
				status := "pending"
				if a.Denied {
					status = "denied"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.ToolName, a.Token,
					time.UnixMilli(a.CreatedAt).Format(time.RFC3339), time.UnixMilli(a.ExpiresAt).Format(time.RFC3339), status)
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&format, "format", "text", "text or json")
	deny := &cobra.Command{
		Use:   "deny ID",
		Short: "Deny a pending approval so it can never run",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, _ := p.settings()
			id := strings.TrimSpace(args[0])
			if err := policy.DenyApproval(s.Home, id, time.Now()); err != nil {
				return &exitError{1, err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Denied approval %s.\n", id)
			return nil
		},
	}
	cmd.AddCommand(list, deny)
	return cmd
}
