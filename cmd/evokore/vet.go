package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/jsonenc"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/vet"
)

func newVet(p *paths) *cobra.Command {
	var format, role, profile, explain, whyNot string
	var strict, live, matrix bool
	var limit int
	cmd := &cobra.Command{
		Use:   "vet",
		Short: "Check mcp.config.json and permissions.yml (for CI)",
		Long: `vet validates mcp.config.json and permissions.yml against evokore's schemas,
then checks what spans files: profiles, role overrides and rules against the
native tools and the configured servers, active roles, unset ${VAR}
placeholders, and servers with neither command nor url. With --live it also
boots the children (a "boot" line per child as its boot ends), reports the
ones that fail, prefixed-name collisions,
and names no booted server serves. With --skills DIR it also indexes that
skill library and reports malformed frontmatter, collisions, and missing,
out-of-range or conflicting dependencies. With --explain QUERY it prints what
discover_tools finds for the query and how each result scored, and with
--why-not NAME why that tool is not a result.

Each section, server and role is checked on its own, so one schema error
hides nothing else. A config or permissions path named by a flag or variable
must exist; vet names the files it read. With none named, the permissions
checked are the ones serve reads: ./permissions.yml, else
$EVOKORE_HOME/permissions.yml. Variables evokore does not know
(EVOKORE_*, VOICE_SIDECAR_*) are warnings.

Every problem is reported as file:line:col. Exit 0 when there are no errors,
1 when there are; 2 for bad usage, such as a --role no roles list defines.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return &exitError{2, fmt.Errorf("--format must be text or json, not %q", format)}
			}
			s, _ := p.settings()
			if role != "" && role != vet.NoRole {
				if err := knownRole(s, role); err != nil {
					return &exitError{2, err}
				}
			}
			mo := vet.MatrixOptions{
				ConfigPath: s.ConfigPath, PermissionsPath: s.PermissionsPath,
				Env: s.Env, Home: s.Home, Children: s.Children,
				Role: role, Profile: profile, Live: live,
			}
			// failed reports an error of the matrix or the explanation:
			// configuration diagnostics as vet prints them, else the error.
			failed := func(err error) error {
				var ds config.Diagnostics
				if errors.As(err, &ds) {
					_ = writeDiagnostics(cmd.OutOrStdout(), format, ds)
					return reported(1)
				}
				return &exitError{1, err}
			}
			if explain != "" {
				err := vet.Explain(cmd.OutOrStdout(), vet.ExplainOptions{MatrixOptions: mo, Query: explain, WhyNot: whyNot, Limit: limit})
				if err != nil {
					return failed(err)
				}
				return nil
			}
			if matrix {
				rows, err := vet.Matrix(mo)
				if err != nil {
					return failed(err)
				}
				if format == "text" {
					fmt.Fprintln(cmd.OutOrStdout(), approvalsLine(s))
				}
				return writeMatrix(cmd.OutOrStdout(), format, rows)
			}
			// The list of files goes to stdout beside text diagnostics and
			// to stderr with --format json, whose stdout is the list alone;
			// so do the boot lines, printed as each child's boot ends.
			fw := cmd.OutOrStdout()
			if format == "json" {
				fw = cmd.ErrOrStderr()
			}
			var booted func(proxy.ServerStatus)
			if live {
				booted = func(st proxy.ServerStatus) { fmt.Fprintln(fw, bootLine(st)) }
			}
			ds, files := vet.RunReport(vet.Options{
				Booted:          booted,
				ConfigPath:      s.ConfigPath,
				PermissionsPath: s.PermissionsPath,
				ConfigFrom:      s.ConfigPathFrom,
				PermissionsFrom: s.PermissionsPathFrom,
				Env:             s.Env,
				Strict:          strict,
				Live:            live,
				Home:            s.Home,
				Children:        s.Children,
			})
			if p.skills != "" {
				files = append(files, "skills: "+p.skills)
			}
			for _, f := range files {
				fmt.Fprintln(fw, "read "+f)
			}
			if p.skills != "" {
				ds = append(ds, vet.Skills(p.skills, strict)...)
				ds.Sort()
			}
			if err := writeDiagnostics(cmd.OutOrStdout(), format, ds); err != nil {
				return err
			}
			if ds.HasErrors() {
				return reported(1)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().BoolVar(&strict, "strict", false, "treat warnings (such as unset placeholders) as errors")
	cmd.Flags().BoolVar(&matrix, "matrix", false, "print the effective surface: every tool's visibility and level per role and profile")
	cmd.Flags().StringVar(&role, "role", "", "with --matrix: only this role (\"none\" for no role)")
	cmd.Flags().StringVar(&profile, "profile", "", "with --matrix: only this profile")
	cmd.Flags().StringVar(&explain, "explain", "", "print what discover_tools finds for this query, with how each result scored (offline: cached tool lists unless --live)")
	cmd.Flags().StringVar(&whyNot, "why-not", "", "with --explain: say why this tool is not a result (under --role and --profile)")
	cmd.Flags().IntVar(&limit, "limit", 8, "with --explain: how many results")
	cmd.Flags().BoolVar(&live, "live", false, "boot the children and check names against the tools they serve (also refreshes the tool-list cache)")
	return cmd
}

// bootLine is what vet --live prints as a child's first boot ends; the
// error is the child's to write, so what would drive the terminal is
// escaped.
func bootLine(st proxy.ServerStatus) string {
	st.ID = jsonenc.Graphic(st.ID)
	switch st.Status {
	case proxy.StatusConnected:
		return fmt.Sprintf("boot %s: connected, %d tool(s)", st.ID, st.RegisteredToolCount)
	case proxy.StatusError:
		return fmt.Sprintf("boot %s: failed: %s", st.ID, jsonenc.Graphic(st.LastError))
	}
	return fmt.Sprintf("boot %s: %s", st.ID, st.Status)
}

// approvalsLine says what an "approval" level means under the approvals
// mode in force, chosen as the router chooses it (a typo is the strict
// choice); serve reports what it ignored, so vet discards that.
func approvalsLine(s config.Settings) string {
	cfg, err := config.LoadMCPConfig(s.ConfigPath)
	if err != nil {
		cfg = &config.MCPConfig{}
	}
	mode := policy.ReadSettings(config.NewVars(s.Env)).ApprovalModeFor(cfg, s.UntrustedConfig, slog.New(slog.DiscardHandler))
	switch mode {
	case policy.ModeToken:
		return "Approvals: token (an \"approval\" call hands the model a token that approves its retry: this trusts the model)"
	case policy.ModeOperator:
		return "Approvals: operator (an \"approval\" call waits for 'evokore approvals approve ID')"
	}
	return "Approvals: auto (an \"approval\" call asks the user through elicitation when the client supports it, else waits for 'evokore approvals approve ID')"
}

func writeMatrix(w io.Writer, format string, rows []vet.Row) error {
	if format == "json" {
		if rows == nil {
			rows = []vet.Row{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tPROFILE\tTOOL\tSOURCE\tLISTED\tLEVEL")
	for _, r := range rows {
		listed := "hidden"
		switch {
		case r.Held:
			listed = "held"
		case r.Visible:
			listed = "visible"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Role, r.Profile, r.Tool, r.Source, listed, r.Level)
	}
	return tw.Flush()
}

func writeDiagnostics(w io.Writer, format string, ds config.Diagnostics) error {
	if format == "json" {
		if ds == nil {
			ds = config.Diagnostics{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(ds)
	}
	errs, warns := 0, 0
	for _, d := range ds {
		// A diagnostic quotes what the files say (a skill's requires, a
		// directory's name), and a skill may come from anywhere
		// (fetch_skill): escape what would drive the terminal, line by
		// line so a message's own lines stay lines.
		lines := strings.Split(d.String(), "\n")
		for i, l := range lines {
			lines[i] = jsonenc.Graphic(l)
		}
		fmt.Fprintln(w, strings.Join(lines, "\n"))
		if d.Severity == config.SeverityError {
			errs++
		} else {
			warns++
		}
	}
	fmt.Fprintf(w, "%d error(s), %d warning(s)\n", errs, warns)
	return nil
}

// knownRole fails for a --role that no roles list defines, naming the
// roles there are: a typo would otherwise print an empty matrix.
func knownRole(s config.Settings, role string) error {
	perms, err := config.LoadPermissions(s.PermissionsPath, policy.ShippedPermissions())
	if err != nil {
		return nil // vet reports the broken file itself
	}
	names := []string{vet.NoRole}
	for _, r := range perms.Roles {
		if r.Name == role {
			return nil
		}
		names = append(names, r.Name)
	}
	return fmt.Errorf("--role %q is not a role in %s; the roles are: %s", role, perms.File, strings.Join(names, ", "))
}
