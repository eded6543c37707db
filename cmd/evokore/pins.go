package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/jsonenc"
	"github.com/evokore/evokore/internal/policy"
)

func newPins(p *paths) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pins",
		Short: "Review tools quarantined because a child changed or added them",
		Long: `The first definition of every child tool (name, title, description, input and
output schema, annotations) is pinned under EVOKORE_HOME, per server and the
way it is started. When a child changes a definition, or adds a tool after
it was pinned, the tool is quarantined until you accept it. 'pins list'
shows what changed, old and new.`,
	}
	var format string
	list := &cobra.Command{
		Use:   "list",
		Short: "List quarantined tools with what changed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, _ := p.servingSettings()
			pins, err := policy.OpenPins(s.Home, nil)
			if err != nil {
				return &exitError{1, err}
			}
			held := pins.Held()
			if format == "json" {
				if held == nil {
					held = []policy.HeldTool{}
				}
				return writeJSON(cmd.OutOrStdout(), held)
			}
			if len(held) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No quarantined tools.")
			}
			for _, h := range held {
				writeHeld(cmd.OutOrStdout(), h)
			}
			// Held skills (the Skills Extension): which files changed,
			// by digest; their text is read from the child, not here.
			for _, h := range pins.HeldSkills() {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: skill %s %s (server %s)\n", jsonenc.Graphic(h.Target), jsonenc.Graphic(h.URI), h.Reason, jsonenc.Graphic(h.Server))
				writeSkillFiles(cmd.OutOrStdout(), h)
			}
			return nil
		},
	}
	list.Flags().StringVar(&format, "format", "text", "text or json")
	accept := &cobra.Command{
		Use:   "accept SERVER[/TOOL]",
		Short: "Trust the definitions a server (or one tool) serves now",
		Long: `Trust the definitions a server (or one tool) serves now. When several
configurations of one server id are pinned, name one as ID@IDENTITY (the
prefix 'pins list' shows).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, _ := p.servingSettings()
			pins, err := policy.OpenPins(s.Home, nil)
			if err != nil {
				return &exitError{1, err}
			}
			server, tool, _ := strings.Cut(args[0], "/")
			accepted, err := pins.Accept(server, tool)
			if err != nil {
				return &exitError{1, err}
			}
			if len(accepted) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "Nothing to accept for %s.\n", args[0])
				return nil
			}
			for _, t := range accepted {
				fmt.Fprintf(cmd.OutOrStdout(), "Accepted %s/%s.\n", jsonenc.Graphic(server), jsonenc.Graphic(t))
			}
			return nil
		},
	}
	cmd.AddCommand(list, accept)
	return cmd
}

// writeHeld prints one held tool and, field by field, the accepted text
// ("-") and the text the child serves now ("+"). Every value comes from a
// child and is shown escaped, so a definition cannot drive the
// operator's terminal.
func writeHeld(w io.Writer, h policy.HeldTool) {
	server := h.Server
	if h.Identity != "" {
		server += ", identity " + h.Identity[:min(12, len(h.Identity))]
	}
	// The target holds the child's tool name, the rest comes from
	// pins.json: escaped like the definitions below.
	server, target := jsonenc.Graphic(server), jsonenc.Graphic(h.Target)
	if h.Reason == "added" {
		fmt.Fprintf(w, "%s: added after the server was pinned (server %s)\n", target, server)
	} else {
		fmt.Fprintf(w, "%s: %s changed (server %s)\n", target, jsonenc.Graphic(strings.Join(h.Fields, ", ")), server)
	}
	var cur catalog.Definition
	if h.Current != nil {
		cur = h.Current.Definition
	}
	for _, f := range pinFields {
		now := f.get(cur)
		if h.Accepted == nil {
			if now != "" {
				fmt.Fprintf(w, "  %s:\n    + %s\n", f.name, now)
			}
			continue
		}
		old := f.get(h.Accepted.Definition)
		if h.Accepted.Hash == "" && f.name != "description" {
			// Pinned by an evokore that kept only the description's text.
			if !contains(h.Fields, f.name) {
				continue
			}
			old = "(not recorded by the evokore that pinned it)"
		}
		if old == now {
			continue
		}
		fmt.Fprintf(w, "  %s:\n    - %s\n    + %s\n", f.name, orNone(old), orNone(now))
	}
}

// pinFields render each part of a definition for the diff: texts quoted
// with non-printing characters escaped, JSON as canonical JSON with the
// same characters escaped.
var pinFields = []struct {
	name string
	get  func(catalog.Definition) string
}{
	{"name", func(d catalog.Definition) string { return quoted(d.Name) }},
	{"title", func(d catalog.Definition) string { return quoted(d.Title) }},
	{"description", func(d catalog.Definition) string { return quoted(d.Description) }},
	{"input schema", func(d catalog.Definition) string { return jsonenc.Graphic(string(d.InputSchema)) }},
	{"output schema", func(d catalog.Definition) string { return jsonenc.Graphic(string(d.OutputSchema)) }},
	{"annotations", func(d catalog.Definition) string { return jsonenc.Graphic(string(d.Annotations)) }},
}

func quoted(s string) string {
	if s == "" {
		return ""
	}
	return strconv.QuoteToGraphic(s)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeSkillFiles prints the files of a held skill whose digest differs
// from the accepted one ("-" accepted, "+" now), escaped: the URIs come
// from a child.
func writeSkillFiles(w io.Writer, h policy.HeldSkill) {
	old := map[string]string{}
	if h.Accepted != nil {
		for _, f := range h.Accepted.Files {
			old[f.URI] = f.Digest
		}
	}
	for _, f := range h.Current.Files {
		if d, ok := old[f.URI]; !ok || d != f.Digest {
			fmt.Fprintf(w, "  %s:\n    - %s\n    + %s\n", jsonenc.Graphic(f.URI), orNone(d), f.Digest)
		}
		delete(old, f.URI)
	}
	for _, uri := range slices.Sorted(maps.Keys(old)) {
		fmt.Fprintf(w, "  %s:\n    - %s\n    + (removed)\n", jsonenc.Graphic(uri), old[uri])
	}
}
