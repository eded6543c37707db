package vet

import (
	"fmt"
	"io"
	"strings"

	"github.com/evokore/evokore/internal/budget"
	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/proxy"
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
	cfg, err := config.LoadMCPConfig(o.ConfigPath)
	if err != nil {
		return err
	}
	perms, err := config.LoadPermissions(o.PermissionsPath, policy.ShippedPermissions())
	if err != nil {
		return err
	}
	if o.Live {
		proxy.BootOnce(proxy.Options{Servers: cfg.Servers, Env: o.Env, Home: o.Home, Log: io.Discard, Version: "vet",
			BootTimeout: o.Children.Boot, RequestTimeout: o.Children.Request, ShutdownGrace: o.Children.ShutdownGrace})
	}
	vars := config.NewVars(o.Env)
	pol, cat := policy.ReadSettings(vars), catalog.ReadSettings(vars)
	pins, _ := policy.OpenPins(o.Home, nil)
	snap := budget.Catalog(cfg, o.Home, pins)
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
		var profile *catalog.Profile
		for _, p := range budget.Profiles(cfg) {
			if p.Name == o.Profile || (o.Profile == "" && p.Name == catalog.DefaultProfile) {
				profile = p
			}
		}
		if profile != nil && !catalog.Visible(e, profile, cat.Discovery.Mode == config.ModeLegacy, nil) {
			reason += fmt.Sprintf("; profile %s does not list it (discovery still finds it; call it by exact name)", profile.Name)
		}
		role := o.Role
		if role == NoRole {
			role = ""
		}
		if note := policy.NewRBAC(perms, pol.DefaultDeny).Level(role, e.Name).CallNote(role); note != "" {
			reason += "; " + note
		}
	}
	fmt.Fprintf(w, "Why not %s: %s.\n", o.WhyNot, reason)
	return nil
}
