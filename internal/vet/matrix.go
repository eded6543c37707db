package vet

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/evokore/evokore/internal/budget"
	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/proxy"
)

// MatrixOptions say which surface to compute.
type MatrixOptions struct {
	ConfigPath      string
	PermissionsPath string
	// Env is the environment the router would read: its role rules
	// (EVOKORE_SECURITY_DEFAULT_DENY) and discovery mode.
	Env config.Env
	// Home holds the tool-list cache and the pins; Children bound a live
	// boot.
	Home     string
	Children config.ChildTimeouts
	// Role and Profile restrict the matrix to one role ("none" for no
	// role) and one profile; empty means all.
	Role, Profile string
	// Live boots the children first for their real tool lists.
	Live bool
}

// Row is one tool under one role and one profile.
type Row struct {
	Role    string `json:"role"`
	Profile string `json:"profile"`
	Tool    string `json:"tool"`
	Source  string `json:"source"`
	Server  string `json:"server,omitempty"`
	Visible bool   `json:"visible"`
	// Held is true for a tool pinning holds: never listed nor callable
	// until an operator accepts it (`evokore pins`).
	Held bool `json:"held,omitempty"`
	// Level is allow, approval or deny.
	Level string `json:"level"`
}

// NoRole labels the rows of a session with no role (flat rules).
const NoRole = "none"

// Matrix is the effective surface: every tool (natives, and proxied tools
// from the tool-list cache or a live boot) with whether it is listed and
// what a call may do, per role and profile, sorted so two configurations
// diff cleanly.
func Matrix(o MatrixOptions) ([]Row, error) {
	sf, err := loadSurface(o)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, role := range sf.roles {
		for _, p := range sf.profiles {
			for _, e := range sf.snap.Entries {
				rows = append(rows, Row{
					Role: role, Profile: p.Name, Tool: e.Name, Source: e.Source.String(), Server: e.Server,
					Visible: catalog.Visible(e, p, sf.legacy, nil),
					Held:    e.Quarantine != "",
					Level:   levelName(sf.rbac.Level(rbacRole(role), e.Name)),
				})
			}
		}
	}
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Profile, b.Profile), cmp.Compare(a.Tool, b.Tool))
	})
	return rows, nil
}

// surface is what Matrix and Explain read from the configuration: the
// catalog (natives, and proxied tools from the tool-list cache or a live
// boot), the role rules, the roles and profiles asked for (every one when
// none is) and whether discovery is legacy.
type surface struct {
	snap     *catalog.Snapshot
	rbac     *policy.RBAC
	roles    []string
	profiles []*catalog.Profile
	legacy   bool
}

// loadSurface reads the surface o names; a role or profile the
// configuration does not have is an error, not an empty answer.
func loadSurface(o MatrixOptions) (*surface, error) {
	cfg, err := config.LoadMCPConfig(o.ConfigPath)
	if err != nil {
		return nil, err
	}
	perms, err := config.LoadPermissions(o.PermissionsPath, policy.ShippedPermissions())
	if err != nil {
		return nil, err
	}
	if o.Live {
		proxy.BootOnce(proxy.Options{Servers: cfg.Servers, Env: o.Env, Home: o.Home, Log: io.Discard, Version: "vet",
			BootTimeout: o.Children.Boot, RequestTimeout: o.Children.Request, ShutdownGrace: o.Children.ShutdownGrace})
	}
	vars := config.NewVars(o.Env)
	pol, cat := policy.ReadSettings(vars), catalog.ReadSettings(vars)
	pins, _ := policy.OpenPins(o.Home, nil) // an unreadable store holds every tool, as in a router
	sf := &surface{
		snap:   budget.Catalog(cfg, o.Home, pins),
		rbac:   policy.NewRBAC(perms, pol.DefaultDeny),
		roles:  []string{NoRole},
		legacy: cat.Discovery.Mode == config.ModeLegacy,
	}
	for _, r := range perms.Roles {
		sf.roles = append(sf.roles, r.Name)
	}
	if o.Role != "" {
		if o.Role != NoRole && !sf.rbac.HasRole(o.Role) {
			return nil, fmt.Errorf("no role %q in %s", o.Role, perms.File)
		}
		sf.roles = []string{o.Role}
	}
	sf.profiles = budget.Profiles(cfg)
	if o.Profile != "" {
		sf.profiles = slices.DeleteFunc(sf.profiles, func(p *catalog.Profile) bool { return p.Name != o.Profile })
		if len(sf.profiles) == 0 {
			return nil, fmt.Errorf("no profile %q", o.Profile)
		}
	}
	return sf, nil
}

// rbacRole is the role RBAC knows a row's role by: "" for NoRole.
func rbacRole(role string) string {
	if role == NoRole {
		return ""
	}
	return role
}

func levelName(l policy.Level) string {
	switch l {
	case policy.RequireApproval:
		return "approval"
	case policy.Deny:
		return "deny"
	}
	return "allow"
}
