package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/budget"
	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/proxy"
)

func newProfile(p *paths) *cobra.Command {
	var all, live bool
	var tokenizer, format string
	var limit int
	cmd := &cobra.Command{
		Use:   "profile NAME | --all",
		Short: "Preview what a discovery profile lists and what it costs in tokens",
		Long: `profile shows the tools a profile lists before any discovery (name, source,
title), their count, the bytes of that tools/list JSON, and its tokens in
cl100k_base and o200k_base. Proxied tools come from the tool-list cache that
a previous run or 'vet --live' left under EVOKORE_HOME; --live boots the
children to read their real schemas. --all compares every profile.

Exit 0 within budget, 2 when a profile costs more than --budget or its own
budget (compared in the first tokenizer).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if all && len(args) > 0 || !all && len(args) != 1 {
				return &exitError{2, fmt.Errorf("name one profile, or pass --all")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var encodings []string
			switch tokenizer {
			case "both":
				encodings = []string{budget.Cl100k, budget.O200k}
			case budget.Cl100k, budget.O200k:
				encodings = []string{tokenizer}
			default:
				return &exitError{2, fmt.Errorf("--tokenizer must be cl100k, o200k or both, not %q", tokenizer)}
			}
			if format != "table" && format != "json" {
				return &exitError{2, fmt.Errorf("--format must be table or json, not %q", format)}
			}
			s, _ := p.settings()
			cfg, err := config.LoadMCPConfig(s.ConfigPath)
			if err != nil {
				return &exitError{1, err}
			}
			if live {
				proxy.BootOnce(proxy.Options{
					Servers: cfg.Servers, Env: s.Env, Home: s.Home, Log: io.Discard, Version: buildVersion(),
					BootTimeout: s.Children.Boot, RequestTimeout: s.Children.Request, ShutdownGrace: s.Children.ShutdownGrace,
				})
			}
			pins, _ := policy.OpenPins(s.Home, nil) // an unreadable store holds every tool, as in a router
			snap := budget.Catalog(cfg, s.Home, pins)
			profiles := budget.Profiles(cfg)

			var chosen []*catalog.Profile
			if all {
				chosen = profiles
			} else {
				for _, pr := range profiles {
					if pr.Name == args[0] {
						chosen = append(chosen, pr)
					}
				}
				if len(chosen) == 0 {
					var names []string
					for _, pr := range profiles {
						names = append(names, pr.Name)
					}
					return &exitError{2, fmt.Errorf("no profile %q (have: %s)", args[0], strings.Join(names, ", "))}
				}
			}
			var reports []budget.Report
			over := false
			for _, pr := range chosen {
				r, err := budget.Measure(pr, snap, encodings, limit)
				if err != nil {
					return err
				}
				over = over || r.OverBudget
				reports = append(reports, r)
			}
			out := cmd.OutOrStdout()
			switch {
			case format == "json" && all:
				err = writeJSON(out, reports)
			case format == "json":
				err = writeJSON(out, reports[0])
			case all:
				err = compareTable(out, reports, encodings)
			default:
				err = profileTable(out, reports[0], encodings)
			}
			if err != nil {
				return err
			}
			if over {
				return &exitError{2, fmt.Errorf("over budget")}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&all, "all", false, "compare every profile")
	fl.BoolVar(&live, "live", false, "boot the children for their real tool lists (refreshes the cache)")
	fl.StringVar(&tokenizer, "tokenizer", "both", "cl100k, o200k or both")
	fl.IntVar(&limit, "budget", 0, "fail (exit 2) above this many tokens")
	fl.StringVar(&format, "format", "table", "table or json")
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func profileTable(w io.Writer, r budget.Report, encodings []string) error {
	fmt.Fprintf(w, "Profile %s", r.Profile)
	if r.Description != "" {
		fmt.Fprintf(w, ": %s", r.Description)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tTITLE")
	for _, t := range r.Tools {
		src := t.Source
		if t.Server != "" {
			src += ":" + t.Server
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, src, t.Title)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d tool(s); tools/list JSON %d bytes", r.Count, r.Bytes)
	for _, enc := range encodings {
		fmt.Fprintf(w, "; %s %d tokens", enc, r.Tokens[enc])
	}
	fmt.Fprintf(w, "; as run_code declarations")
	for _, enc := range encodings {
		fmt.Fprintf(w, " %s %d", enc, r.StubTokens[enc])
	}
	if r.Budget > 0 {
		verdict := "within budget"
		if r.OverBudget {
			verdict = "OVER BUDGET"
		}
		fmt.Fprintf(w, "; budget %d (%s)", r.Budget, verdict)
	}
	fmt.Fprintln(w)
	if len(r.Missing) > 0 {
		fmt.Fprintf(os.Stderr, "%d listed name(s) have no known tool (run the router once or use --live): %s\n", len(r.Missing), strings.Join(r.Missing, ", "))
	}
	return nil
}

func compareTable(w io.Writer, reports []budget.Report, encodings []string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	header := "PROFILE\tTOOLS\tBYTES"
	for _, enc := range encodings {
		header += "\t" + strings.ToUpper(enc)
	}
	for _, enc := range encodings {
		header += "\tTS " + strings.ToUpper(enc)
	}
	fmt.Fprintln(tw, header+"\tBUDGET\t")
	for _, r := range reports {
		line := fmt.Sprintf("%s\t%d\t%d", r.Profile, r.Count, r.Bytes)
		for _, enc := range encodings {
			line += fmt.Sprintf("\t%d", r.Tokens[enc])
		}
		for _, enc := range encodings {
			line += fmt.Sprintf("\t%d", r.StubTokens[enc])
		}
		b := "-"
		if r.Budget > 0 {
			b = fmt.Sprint(r.Budget)
			if r.OverBudget {
				b += " OVER"
			}
		}
		fmt.Fprintln(tw, line+"\t"+b+"\t")
	}
	return tw.Flush()
}
