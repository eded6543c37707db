package catalog

import "strings"

// Visibility is how a profile decides which tools are always listed.
type Visibility uint8

// Visibilities.
const (
	// VisibleAllNative lists every native tool; proxied tools wait for
	// discovery.
	VisibleAllNative Visibility = iota
	// VisibleAll lists every tool.
	VisibleAll
	// VisibleList lists only the named tools.
	VisibleList
)

// Profile is a discovery profile compiled for lookups.
type Profile struct {
	Name        string
	Description string
	Visibility  Visibility
	// Natives are the native tools a VisibleList profile lists.
	Natives map[string]bool
	// Proxied are the proxied names a VisibleList profile lists, in the
	// order written; they may name tools of servers that are not running.
	Proxied                  []string
	MandatoryInjectionSkills []string
	// Budget is the most cl100k tokens the profile's listing may cost; 0
	// means no budget.
	Budget int
	// Skills are the only skills the profile serves by the Skills
	// Extension; nil serves all.
	Skills []string
}

// ServesSkill reports whether the profile serves a skill known by any of
// names (its name, its category/name).
func (p *Profile) ServesSkill(names ...string) bool {
	if p == nil || p.Skills == nil {
		return true
	}
	for _, want := range p.Skills {
		for _, n := range names {
			if n != "" && strings.EqualFold(want, n) {
				return true
			}
		}
	}
	return false
}
