package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/connect"
)

func platform() connect.Platform { return connect.Platform{GOOS: runtime.GOOS, Getenv: os.Getenv} }

// connectOptions resolves what connect and disconnect work on: the
// client's file, this executable, the config the entry serves and the
// home the records live in.
func connectOptions(p *paths, name string, project bool) (connect.Options, error) {
	c, err := connect.Lookup(name)
	if err != nil {
		return connect.Options{}, &exitError{2, err}
	}
	var file string
	if project {
		if c.Project == "" {
			return connect.Options{}, &exitError{2, fmt.Errorf("--project: %s has no project file evokore edits (claude-code's is .mcp.json)", c.Name)}
		}
		file, err = filepath.Abs(c.Project)
	} else {
		file, err = c.Path(platform())
	}
	if err != nil {
		return connect.Options{}, &exitError{1, err}
	}
	home, err := filepath.Abs(userHome())
	if err != nil {
		return connect.Options{}, &exitError{1, err}
	}
	t, err := connectTarget(p, home, file, project)
	if err != nil {
		return connect.Options{}, err
	}
	return connect.Options{Client: c, File: file, Target: t, Home: home, Schema: serverSchema}, nil
}

// connectTarget is what the entry runs. A project's file is committed
// and used on teammates' machines, so its entry is portable: evokore
// from PATH, reading the project's own ./mcp.config.json, where the
// project's servers are imported.
func connectTarget(p *paths, home, file string, project bool) (connect.Target, error) {
	if project {
		if p.config != "" {
			return connect.Target{}, &exitError{2, fmt.Errorf("--project writes an entry that reads the project's ./mcp.config.json on every machine; --config does not apply")}
		}
		return connect.Target{Exe: "evokore", Config: filepath.Join(filepath.Dir(file), "mcp.config.json"), Portable: true}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return connect.Target{}, &exitError{1, fmt.Errorf("cannot tell where this evokore is: %w", err)}
	}
	cfg := filepath.Join(home, "mcp.config.json")
	if p.config != "" {
		if cfg, err = filepath.Abs(p.config); err != nil {
			return connect.Target{}, &exitError{1, err}
		}
	}
	t := connect.Target{Exe: exe, Config: cfg}
	if v, ok := config.ProcessEnv().Lookup("EVOKORE_HOME"); ok && strings.TrimSpace(v) != "" {
		t.Home = home
	}
	return t, nil
}

// serverSchema checks one server entry against mcp.config.json's schema,
// as vet would: connect writes OAuth settings only where it takes them.
func serverSchema(entry []byte) error {
	src := []byte(`{"servers": {"imported": ` + string(entry) + `}}`)
	cfg, ds := config.ParseMCPConfig("", src)
	if cfg != nil {
		ds = append(ds, cfg.ServerProblems...)
	}
	var msgs []string
	for _, d := range ds {
		if d.Severity == config.SeverityError {
			msgs = append(msgs, strings.TrimPrefix(d.Message, "servers.imported."))
		}
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

func clientNames() string {
	var names []string
	for _, c := range connect.Clients {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

func newConnect(p *paths) *cobra.Command {
	var imp, project, dryRun, list, sandbox bool
	cmd := &cobra.Command{
		Use:   "connect CLIENT [--import] [--project] [--dry-run] | connect --list",
		Short: "Add evokore to an MCP client's configuration (and move its servers under evokore with --import)",
		Long: `connect adds one server named evokore to CLIENT's configuration file; it runs
this evokore with --config $EVOKORE_HOME/mcp.config.json (or the --config
given), created empty when absent. With --import the client's other servers
move into that config and only evokore stays in the client; an entry that
would start evokore itself is refused. The file's other keys, their order
and its formatting are kept; the file is backed up first
(<file>.evokore-backup-<time>), and a second run changes nothing.
'evokore disconnect CLIENT' takes it back out.

Clients: ` + clientNames() + `.
--project edits ./.mcp.json (claude-code) instead of the user file, with
an entry that works on every machine: evokore from PATH, serving the
project's ./mcp.config.json, where --import moves the project's servers.
--dry-run prints the change as a unified diff (every secret hidden) and
writes nothing. --list shows every client, whether its file
was found, and whether evokore is connected.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if list {
				if len(args) > 0 || imp || project || dryRun {
					return &exitError{2, fmt.Errorf("--list takes no client and no other flag")}
				}
				return listClients(out)
			}
			if len(args) == 0 {
				return &exitError{2, fmt.Errorf("name a client (%s), or give --list", clientNames())}
			}
			if sandbox && args[0] != "claude-code" {
				return &exitError{2, fmt.Errorf("--sandbox: only Claude Code's shell can be confined by evokore")}
			}
			o, err := connectOptions(p, args[0], project)
			if err != nil {
				return err
			}
			o.Import = imp
			plan, err := connect.Connect(o)
			if err != nil {
				return &exitError{1, err}
			}
			if err := finish(out, o, plan, dryRun, func() { reportConnect(out, o, plan) }); err != nil || !sandbox {
				return err
			}
			return sandboxClaudeCode(out, project, dryRun)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&imp, "import", false, "move the client's other servers into evokore's config")
	fl.BoolVar(&project, "project", false, "edit the project file (./.mcp.json for claude-code) instead of the user file")
	fl.BoolVar(&dryRun, "dry-run", false, "print the change as a unified diff and write nothing")
	fl.BoolVar(&list, "list", false, "show every known client and whether evokore is connected")
	fl.BoolVar(&sandbox, "sandbox", false, "claude-code: also confine its shell in Claude Code's sandbox (as 'evokore hooks install --sandbox')")
	return cmd
}

func newDisconnect(p *paths) *cobra.Command {
	var project, dryRun bool
	cmd := &cobra.Command{
		Use:   "disconnect CLIENT [--project] [--dry-run]",
		Short: "Remove evokore from an MCP client's configuration and give back the servers connect imported",
		Long: `disconnect removes the evokore entry from CLIENT's configuration file and puts
back the servers 'evokore connect --import' moved out of it, as they were
written. When nothing else in the file changed since connect, the file is
restored byte for byte from the backup connect took. The file is backed up
first. The imported servers also stay in evokore's config: remove them
there once no other client uses them.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			o, err := connectOptions(p, args[0], project)
			if err != nil {
				return err
			}
			plan, err := connect.Disconnect(o)
			if err != nil {
				return &exitError{1, err}
			}
			return finish(out, o, plan, dryRun, func() { reportDisconnect(out, o, plan) })
		},
	}
	cmd.Flags().BoolVar(&project, "project", false, "edit the project file (./.mcp.json for claude-code) instead of the user file")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the change as a unified diff and write nothing")
	return cmd
}

// finish prints the diff of a dry run, or applies the plan and reports.
func finish(out io.Writer, o connect.Options, plan *connect.Plan, dryRun bool, report func()) error {
	fmt.Fprintf(out, "%s: %s\n", o.Client.Title, o.File)
	if dryRun {
		if !plan.Changed() {
			fmt.Fprintln(out, "  no change")
			return nil
		}
		report()
		fmt.Fprint(out, plan.Diff())
		fmt.Fprintln(out, "(dry run: nothing written)")
		return nil
	}
	if !plan.Changed() {
		report()
		fmt.Fprintln(out, "  no change")
		return nil
	}
	backups, err := plan.Apply(time.Now())
	for _, b := range backups {
		fmt.Fprintf(out, "  backup: %s\n", b)
	}
	if err != nil {
		return &exitError{1, err}
	}
	report()
	return nil
}

func reportConnect(out io.Writer, o connect.Options, plan *connect.Plan) {
	switch {
	case plan.Connected:
		fmt.Fprintln(out, "  evokore is already connected")
	case o.Target.Portable:
		fmt.Fprintf(out, "  evokore entry: evokore serve (evokore from PATH, started in the project, reads %s there; no path of this machine)\n", filepath.Base(o.Target.Config))
	default:
		fmt.Fprintf(out, "  evokore entry: %s serve --config %s\n", o.Target.Exe, o.Target.Config)
	}
	if _, err := exec.LookPath("evokore"); o.Target.Portable && err != nil {
		fmt.Fprintln(out, "  note: 'evokore' is not on this PATH, and the project's entry runs evokore from PATH on every machine: put evokore there (a link in a PATH folder will do)")
	}
	if len(plan.Passed) > 0 {
		fmt.Fprintf(out, "  evokore entry passes from %s's environment: %s\n", o.Client.Title, strings.Join(plan.Passed, ", "))
	}
	if len(plan.Imported) > 0 {
		fmt.Fprintf(out, "  imported into %s: %s\n", o.Target.Config, strings.Join(plan.Imported, ", "))
	}
	if len(plan.Already) > 0 {
		fmt.Fprintf(out, "  already in %s, removed from the client: %s\n", o.Target.Config, strings.Join(plan.Already, ", "))
	}
	for _, r := range plan.Refused {
		fmt.Fprintf(out, "  not imported: '%s': %s\n", r.Name, r.Why)
	}
	if len(plan.Kept) > 0 {
		fmt.Fprintf(out, "  left in the client: %s (--import moves them under evokore)\n", strings.Join(plan.Kept, ", "))
	}
}

func reportDisconnect(out io.Writer, o connect.Options, plan *connect.Plan) {
	switch {
	case plan.ByteRestore:
		fmt.Fprintln(out, "  restored as it was before connect")
	case !plan.Client.Changed():
		fmt.Fprintln(out, "  evokore is not connected")
		return
	default:
		fmt.Fprintln(out, "  removed the evokore entry")
	}
	if plan.NoRecord {
		fmt.Fprintln(out, "  no record of an import: no server to give back")
	}
	if len(plan.Restored) > 0 {
		fmt.Fprintf(out, "  given back: %s (they stay in %s too; remove them there once no other client uses them)\n", strings.Join(plan.Restored, ", "), o.Target.Config)
	}
}

func listClients(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tFILE\tSTATE")
	for _, s := range clientStates() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Client.Name, s.File, describeState(s))
	}
	return tw.Flush()
}

func describeState(s connect.State) string {
	switch {
	case s.Err != nil:
		return "unreadable: " + s.Err.Error()
	case !s.Found:
		return "not found"
	case s.Connected && len(s.Others) > 0:
		return fmt.Sprintf("connected, %d other server(s) beside it", len(s.Others))
	case s.Connected:
		return "connected"
	}
	return fmt.Sprintf("found, not connected (%d server(s))", len(s.Others))
}
