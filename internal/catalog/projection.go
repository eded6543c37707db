package catalog

import (
	"fmt"

	"github.com/evokore/evokore/internal/config"
)

// DescribeTool is always listed: it is how a client that sees only names
// gets schemas.
const DescribeTool = "describe_tool"

// FromConfig compiles a user profile from mcp.config.json. isNative tells
// natives from proxied names in an allowlist.
func FromConfig(p config.Profile, isNative func(string) bool) Profile {
	out := Profile{
		Name:                     p.Name,
		Description:              p.Description,
		MandatoryInjectionSkills: p.MandatoryInjectionSkills,
		Budget:                   p.Budget,
		Skills:                   p.Skills,
	}
	switch p.AlwaysVisible.Mode {
	case config.VisibleAll:
		out.Visibility = VisibleAll
	case config.VisibleList:
		out.Visibility = VisibleList
		out.Natives = map[string]bool{}
		for _, n := range p.AlwaysVisible.Names {
			if isNative(n) {
				out.Natives[n] = true
			} else {
				out.Proxied = append(out.Proxied, n)
			}
		}
	default:
		out.Visibility = VisibleAllNative
	}
	return out
}

// Lists reports whether the profile lists e without any discovery.
func (p *Profile) Lists(e *Entry) bool {
	if e.Name == DescribeTool {
		return true
	}
	switch p.Visibility {
	case VisibleAll:
		return true
	case VisibleList:
		if e.Source != SourceProxy {
			return p.Natives[e.Name]
		}
		for _, n := range p.Proxied {
			if n == e.Name {
				return true
			}
		}
		return false
	}
	return e.Source != SourceProxy
}

// Visible reports whether a session lists e. It is the one definition of
// "listed" that tools/list, discovery, `vet --matrix` and `evokore
// profile` share: never a tool held by pinning; otherwise everything in
// legacy mode, else what the profile lists plus what the session
// activated (activated may be nil: a fresh session).
func Visible(e *Entry, p *Profile, legacy bool, activated func(name string) bool) bool {
	if e.Quarantine != "" {
		return false
	}
	return legacy || p.Lists(e) || (activated != nil && activated(e.Name))
}

// Project returns what a session lists (see Visible), in catalog order.
func (s *Snapshot) Project(p *Profile, legacy bool, activated func(name string) bool) []*Entry {
	out := make([]*Entry, 0, len(s.Entries))
	for _, e := range s.Entries {
		if Visible(e, p, legacy, activated) {
			out = append(out, e)
		}
	}
	return out
}

// Profile resolution sources, as the startup log reports them.
const (
	SourceBuiltinDefault = "builtin-default"
	SourceSafetyPin      = "safety-pin-legacy"
	SourceEnv            = "env"
	SourceConfig         = "config"
	SourceFallback       = "fallback-default"
)

// Resolution is the profile a router runs with and why.
type Resolution struct {
	Profile *Profile
	Source  string
	// Warning explains a requested profile that was not used.
	Warning string
}

// Resolve picks the profile with EVOKORE-MCP's precedence:
//  1. mode legacy or unset, and no profile requested: the default;
//  2. mode legacy and a profile requested: the default (the safety pin);
//  3. EVOKORE_DISCOVERY_PROFILE, when it names a profile;
//  4. discovery.activeProfile, when it names a profile;
//  5. otherwise the default.
//
// user are the profiles of mcp.config.json; one with a shipped name
// replaces the shipped one.
func Resolve(s Discovery, activeProfile string, user []Profile) Resolution {
	profiles := map[string]*Profile{}
	for _, p := range shippedProfiles {
		p := p
		profiles[p.Name] = &p
	}
	for _, p := range user {
		p := p
		profiles[p.Name] = &p
	}
	def := profiles[DefaultProfile]
	requested := s.Profile != "" || activeProfile != ""
	legacy := s.ModeSet && s.Mode == config.ModeLegacy
	switch {
	case !requested && (legacy || !s.ModeSet):
		return Resolution{Profile: def, Source: SourceBuiltinDefault}
	case legacy:
		return Resolution{Profile: def, Source: SourceSafetyPin}
	case s.Profile != "":
		if p, ok := profiles[s.Profile]; ok {
			return Resolution{Profile: p, Source: SourceEnv}
		}
		return Resolution{Profile: def, Source: SourceFallback,
			Warning: fmt.Sprintf("Unknown discovery profile '%s' (EVOKORE_DISCOVERY_PROFILE). Using the default profile.", s.Profile)}
	case activeProfile != "":
		if p, ok := profiles[activeProfile]; ok {
			return Resolution{Profile: p, Source: SourceConfig}
		}
		return Resolution{Profile: def, Source: SourceFallback,
			Warning: fmt.Sprintf("Unknown discovery profile '%s' (discovery.activeProfile). Using the default profile.", activeProfile)}
	}
	return Resolution{Profile: def, Source: SourceBuiltinDefault}
}
