package vet

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/evokore/evokore/internal/catalog"
)

// ExplainOptions say what to explain: a discover_tools query over the
// catalog the configuration gives (natives, and proxied tools from the
// tool-list cache or a live boot), and optionally one tool to say why it
// is not a result.
type ExplainOptions struct {
	MatrixOptions
	Query, WhyNot string
	Limit         int
}

// Explain prints what discover_tools with explain: true answers for the
// query, offline: each result with the signals it scored, why the search
// abstained when it did, and why the named tool is not a result.
func Explain(w io.Writer, o ExplainOptions) error {
	sf, err := loadSurface(o.MatrixOptions)
	if err != nil {
		return err
	}
	snap := sf.snap
	limit := o.Limit
	if limit <= 0 {
		limit = 8
	}
	q := strings.TrimSpace(o.Query)
	found := snap.Find(q, limit)
	fmt.Fprintf(w, "Query: %s\n%d tool(s) searched, %d matched.\n", q, len(snap.Entries), len(found.Matches))
	if len(found.Matches) == 0 && found.Why != "" {
		fmt.Fprintf(w, "Why nothing matched: %s.\n", found.Why)
	}
	for i, m := range found.Matches {
		fmt.Fprintf(w, "%d. %s\n   why: %s\n", i+1, m.Entry.Name, m.Signals())
	}
	if o.WhyNot == "" {
		return nil
	}
	reason := snap.WhyNot(q, o.WhyNot, limit, nil)
	if e, ok := snap.Lookup(o.WhyNot); ok && e.Quarantine == "" {
		// The profile asked for, else the default one a session gets.
		i := 0
		if o.Profile == "" {
			i = slices.IndexFunc(sf.profiles, func(p *catalog.Profile) bool { return p.Name == catalog.DefaultProfile })
		}
		if i >= 0 && !catalog.Visible(e, sf.profiles[i], sf.legacy, nil) {
			reason += fmt.Sprintf("; profile %s does not list it (discovery still finds it; call it by exact name)", sf.profiles[i].Name)
		}
		role := rbacRole(o.Role)
		if note := sf.rbac.Level(role, e.Name).CallNote(role); note != "" {
			reason += "; " + note
		}
	}
	fmt.Fprintf(w, "Why not %s: %s.\n", o.WhyNot, reason)
	return nil
}
