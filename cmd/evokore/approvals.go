package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/evokore/evokore/internal/audit"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/jsonenc"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/records"
	"github.com/evokore/evokore/internal/sharedstate"
)

// listApprovals reads the approvals of the running routers: the shared
// ones in Redis when EVOKORE_SESSION_STORE=redis, else EVOKORE_HOME's.
func listApprovals(ctx context.Context, s config.Settings) ([]policy.PendingApproval, error) {
	sh, err := sharedstate.Open(contextOr(ctx), sharedstate.ReadOptions(s.Env, s.Home, s.SessionTTL))
	if err != nil || sh == nil {
		if err != nil {
			return nil, err
		}
		return policy.ListPending(s.Home, time.Now())
	}
	defer sh.Close()
	return policy.ListShared(contextOr(ctx), sh.Approvals)
}

// decideApproval records an operator's verdict where the routers look.
func decideApproval(ctx context.Context, s config.Settings, id, verdict string) error {
	err := decideApprovalWhere(ctx, s, id, verdict)
	if record := auditDecision(s, "'evokore approvals'"); err == nil && record != nil {
		record(id, verdict)
	}
	return err
}

// auditDecision returns what appends an operator's decision, taken
// through via, to the audit log; nil when EVOKORE_AUDIT_LOG is off.
func auditDecision(s config.Settings, via string) func(id, verdict string) {
	rec := records.ReadSettings(config.NewVars(s.Env))
	if !rec.AuditLog {
		return nil
	}
	return func(id, verdict string) {
		audit.Append(audit.Options{Path: audit.Path(s.Home), MaxBytes: rec.AuditMaxBytes, Keep: rec.AuditKeep},
			audit.OperatorDecision(id, verdict, via))
	}
}

func decideApprovalWhere(ctx context.Context, s config.Settings, id, verdict string) error {
	sh, err := sharedstate.Open(contextOr(ctx), sharedstate.ReadOptions(s.Env, s.Home, s.SessionTTL))
	if err != nil {
		return err
	}
	if sh == nil {
		return policy.Decide(s.Home, id, verdict, time.Now())
	}
	defer sh.Close()
	err = sh.Approvals.Decide(contextOr(ctx), id, verdict)
	if errors.Is(err, policy.ErrNoApproval) {
		return fmt.Errorf("no pending approval %q (see 'evokore approvals list')", id)
	}
	if errors.Is(err, policy.ErrApprovalDenied) {
		return fmt.Errorf("approval %s was denied; it cannot be approved", id)
	}
	return err
}

// unsafeNoTTYFlag lets approve and deny run without a terminal.
const unsafeNoTTYFlag = "unsafe-no-tty"

// confirmDecision shows the held call on the operator's terminal and asks
// to confirm the verdict. Without a terminal it refuses: the shell of an
// AI agent has none, and the agent is the party the approval gates.
func confirmDecision(cmd *cobra.Command, s config.Settings, id, verdict string) error {
	in, ok := cmd.InOrStdin().(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return fmt.Errorf("refusing to %s approval %s without an interactive terminal: an operator confirms each decision at a terminal "+
			"(an AI agent's shell has none); --%s skips this and is unsafe (see docs/security.md)", verbOf(verdict), id, unsafeNoTTYFlag)
	}
	pending, err := listApprovals(cmd.Context(), s)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(pending, func(a policy.PendingApproval) bool { return a.ID == id })
	if i < 0 {
		return fmt.Errorf("no pending approval %q (see 'evokore approvals list')", id)
	}
	a := pending[i]
	out := cmd.ErrOrStderr()
	fmt.Fprintf(out, "Held call %s\n  tool:      %s\n  session:   %s\n  state:     %s\n  expires:   %s\n  arguments:",
		jsonenc.Graphic(a.ID), jsonenc.Graphic(a.ToolName), jsonenc.Graphic(a.Session), jsonenc.Graphic(a.State),
		time.UnixMilli(a.ExpiresAt).Format(time.RFC3339))
	if a.Arguments == "" {
		fmt.Fprint(out, " (none)")
	}
	for line := range strings.SplitSeq(a.Arguments, "\n") {
		if line != "" {
			fmt.Fprintf(out, "\n    %s", jsonenc.Graphic(line))
		}
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "%s it? Type yes to confirm: ", capitalized(verbOf(verdict)))
	line, _ := bufio.NewReader(in).ReadString('\n')
	if answer := strings.ToLower(strings.TrimSpace(line)); answer != "yes" && answer != "y" {
		return fmt.Errorf("not confirmed; approval %s is unchanged", id)
	}
	return nil
}

// listedArguments bounds the ARGUMENTS column of 'approvals list', in
// characters.
const listedArguments = 80

// argumentsLine is a held call's arguments on one line of the list:
// escaped, and cut with a mark; 'approvals approve ID' shows them all
// before it asks.
func argumentsLine(shown string) string {
	line := jsonenc.Graphic(strings.ReplaceAll(shown, "\n", ", "))
	if utf8.RuneCountInString(line) <= listedArguments {
		return line
	}
	return string([]rune(line)[:listedArguments]) + "…"
}

func verbOf(verdict string) string {
	if verdict == policy.StateApproved {
		return "approve"
	}
	return "deny"
}

func capitalized(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func contextOr(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

func newApprovals(p *paths) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List, approve or deny the calls running routers hold for a human",
		Long: `A tool whose level is require_approval runs only after a human approved that
exact call. With a client that supports elicitation the user is asked
directly; otherwise the router holds the call for an operator and tells the
model only its approval id. Every running router lists what it holds under
EVOKORE_HOME/approvals; 'approvals approve ID' lets the held call run once
when the model retries it, 'approvals deny ID' makes sure it never runs.`,
	}
	var format string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the approvals of running routers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, _ := p.servingSettings()
			pending, err := listApprovals(cmd.Context(), s)
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
			fmt.Fprintln(tw, "ID\tTOOL\tSTATE\tCREATED\tEXPIRES\tARGUMENTS")
			for _, a := range pending {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", jsonenc.Graphic(a.ID), jsonenc.Graphic(a.ToolName), jsonenc.Graphic(a.State),
					time.UnixMilli(a.CreatedAt).Format(time.RFC3339), time.UnixMilli(a.ExpiresAt).Format(time.RFC3339), argumentsLine(a.Arguments))
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&format, "format", "text", "text or json")
	decide := func(use, short, verdict, done string) *cobra.Command {
		var unsafeNoTTY bool
		c := &cobra.Command{
			Use:   use + " ID",
			Short: short,
			Long: short + `.

On an interactive terminal it shows the held call (tool, arguments,
session) and asks for confirmation. Without a terminal it refuses: an AI
agent's shell has none, and an agent must not decide its own approvals.
--` + unsafeNoTTYFlag + ` skips both; it is unsafe, because then any
process of this user that can run evokore decides approvals (see
docs/security.md). Use it only from a script no agent can run.`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				s, _ := p.servingSettings()
				id := strings.TrimSpace(args[0])
				if !unsafeNoTTY {
					if err := confirmDecision(cmd, s, id, verdict); err != nil {
						return &exitError{1, err}
					}
				}
				if err := decideApproval(cmd.Context(), s, id, verdict); err != nil {
					return &exitError{1, err}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s approval %s.\n", done, id)
				return nil
			},
		}
		c.Flags().BoolVar(&unsafeNoTTY, unsafeNoTTYFlag, false, "decide without a terminal and without confirmation (unsafe: any same-user process could then approve)")
		return c
	}
	cmd.AddCommand(list,
		decide("approve", "Approve a held call: it runs once when the model retries it", policy.StateApproved, "Approved"),
		decide("deny", "Deny a held call so it can never run", policy.StateDenied, "Denied"))
	return cmd
}
