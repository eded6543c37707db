package policy

import (
	"maps"
	"strings"

	"github.com/evokore/evokore/internal/config"
)

// RBAC answers what a role may do with a tool, in the seed's order: with a
// role, the role's override for the tool, else its default_permission;
// with no role, the flat rule, else allow (deny with
// EVOKORE_SECURITY_DEFAULT_DENY=true). Native and proxied tools are
// treated alike.
//
// Roles defined exactly as shipped answer native tools from the generated
// matrix; everything else is compiled from permissions.yml at load.
type RBAC struct {
	roles       map[string]*role
	rules       map[string]Level
	defaultDeny bool
	file        string
}

type role struct {
	// skills allow (true) or deny (false) skills by name.
	skills    map[string]bool
	def       Level
	overrides map[string]Level
	// matrix is the generated row of a role left as shipped.
	matrix map[string]Level
}

// NewRBAC compiles the permissions. defaultDeny is
// EVOKORE_SECURITY_DEFAULT_DENY.
func NewRBAC(p *config.Permissions, defaultDeny bool) *RBAC {
	r := &RBAC{roles: map[string]*role{}, rules: map[string]Level{}, defaultDeny: defaultDeny, file: p.File}
	for _, cr := range p.Roles {
		ro := &role{def: ParseLevel(cr.DefaultPermission), overrides: map[string]Level{}}
		for tool, lvl := range cr.Overrides {
			ro.overrides[tool] = ParseLevel(lvl)
		}
		for skill, v := range cr.Skills {
			if ro.skills == nil {
				ro.skills = map[string]bool{}
			}
			ro.skills[strings.ToLower(skill)] = v == "allow"
		}
		if shipped, ok := shippedRole(cr.Name); ok && sameRole(shipped, cr) {
			ro.matrix = shippedMatrix[cr.Name]
		}
		r.roles[cr.Name] = ro
	}
	for tool, lvl := range p.Rules {
		r.rules[tool] = ParseLevel(lvl)
	}
	return r
}

func shippedRole(name string) (config.Role, bool) {
	for _, r := range ShippedPermissions().Roles {
		if r.Name == name {
			return r, true
		}
	}
	return config.Role{}, false
}

func sameRole(a, b config.Role) bool {
	return a.DefaultPermission == b.DefaultPermission && maps.Equal(a.Overrides, b.Overrides)
}

// HasRole reports whether the role is defined.
func (r *RBAC) HasRole(name string) bool {
	_, ok := r.roles[name]
	return ok
}

// File is the permissions.yml the rules came from ("" for the shipped
// ones).
func (r *RBAC) File() string { return r.file }

// Level is what roleName may do with tool; "" (or an undefined role) means
// no role. Under a role, a flat deny still holds: a role never weakens a
// tool the user denied outright. The other flat rules are for sessions
// without a role, so a strict role's default is not loosened by them.
func (r *RBAC) Level(roleName, tool string) Level {
	if ro, ok := r.roles[roleName]; ok {
		if lvl, flat := r.rules[tool]; flat && lvl == Deny {
			return Deny
		}
		if ro.matrix != nil {
			if lvl, ok := ro.matrix[tool]; ok {
				return lvl
			}
		}
		if lvl, ok := ro.overrides[tool]; ok {
			return lvl
		}
		return ro.def
	}
	if lvl, ok := r.rules[tool]; ok {
		return lvl
	}
	if r.defaultDeny {
		return Deny
	}
	return Allow
}

// Named is the level the rules give tool by its name under roleName, and
// whether any rule names it: a flat deny (which holds under a role too),
// the role's shipped matrix or override, or, with no role, the flat rule.
// A role's default_permission and EVOKORE_SECURITY_DEFAULT_DENY name no
// tool.
func (r *RBAC) Named(roleName, tool string) (Level, bool) {
	if ro, ok := r.roles[roleName]; ok {
		if lvl, flat := r.rules[tool]; flat && lvl == Deny {
			return Deny, true
		}
		if lvl, ok := ro.matrix[tool]; ok {
			return lvl, true
		}
		lvl, ok := ro.overrides[tool]
		return lvl, ok
	}
	lvl, ok := r.rules[tool]
	return lvl, ok
}

// SkillAllowed reports whether a role may see and use a skill known by
// any of names (its name, its category/name): without a role every skill
// is; a role named but not defined fails closed; a defined role denies
// only what its skills deny.
func (r *RBAC) SkillAllowed(roleName string, names ...string) bool {
	if roleName == "" {
		return true
	}
	ro := r.roles[roleName]
	if ro == nil {
		return false
	}
	for _, n := range names {
		if allow, ok := ro.skills[strings.ToLower(n)]; ok && n != "" {
			return allow
		}
	}
	return true
}
