package policy

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/skills"
)

// Skill pinning.
//
// A child's skills (Skills Extension, SEP-2640) are pinned as its tools
// are, in the same pins.json entry of the server's identity: the first
// time a skill is seen, the digests of all its files are recorded, keyed
// by the child's SKILL.md URI. From then on a skill is held (not listed,
// not fetched, never run) when the child serves another set of files
// under that URI (a file changed, added or removed), or when it is a
// skill the server added after its skills were pinned (unless
// "pinNewTools": "accept"), until `evokore pins accept SERVER[/NAME]`.
// The model is told that the files changed, never what they now say.

// SkillPin is what is known about one skill's files.
type SkillPin struct {
	// Accepted is the manifest an operator trusts; nil for a skill added
	// after the server was pinned that nobody accepted yet.
	Accepted *PinnedSkill `json:"accepted,omitempty"`
	// Changed is the manifest the child serves now when it is not the
	// accepted one.
	Changed *PinnedSkill `json:"changed,omitempty"`
}

// PinnedSkill is one version of a skill's manifest.
type PinnedSkill struct {
	Name   string        `json:"name"`
	Hash   string        `json:"hash"`
	Files  []skills.File `json:"files"`
	SeenAt time.Time     `json:"seenAt"`
}

// CheckSkills pins a server's skills and returns the model-visible text
// of each skill it holds, keyed by the child's SKILL.md URI, and a store
// problem to log (proxy.SkillPinner).
func (p *Pins) CheckSkills(server config.Server, list []skills.Pinned) (held map[string]string, problem string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refreshLocked()
	held = map[string]string{}
	if p.broken != nil {
		for _, k := range list {
			held[k.URI] = msgSkillPinsUnreadable(server.PublicName(k.Name))
		}
		return held, p.reportLocked("", p.broken.Error())
	}
	identity := server.Identity()
	key := pinKey(server.ID, identity)
	sp := p.doc.Pinned[key]
	if sp == nil {
		sp = &serverPins{Server: server.ID, Identity: identity, Tools: map[string]*Pin{}}
		p.doc.Pinned[key] = sp
	}
	fresh := sp.Skills == nil
	if fresh {
		sp.Skills = map[string]*SkillPin{}
	}
	now := p.now()
	dirty := fresh
	var recorded []string
	for _, k := range list {
		cur := &PinnedSkill{Name: k.Name, Hash: k.Hash, Files: k.Files, SeenAt: now}
		pin := sp.Skills[k.URI]
		switch {
		case pin == nil && (fresh || !server.HoldsNewTools()):
			sp.Skills[k.URI] = &SkillPin{Accepted: cur}
			recorded = append(recorded, k.URI)
			dirty = true
		case pin != nil && pin.Accepted != nil && pin.Accepted.Hash == k.Hash:
			if pin.Changed != nil {
				pin.Changed = nil // back to the trusted files
				dirty = true
			}
		default:
			if pin == nil {
				pin = &SkillPin{}
				sp.Skills[k.URI] = pin
			}
			if pin.Changed == nil || pin.Changed.Hash != k.Hash {
				pin.Changed = cur
				dirty = true
			}
			target := p.targetLocked(server.ID, identity, k.Name)
			if pin.Accepted == nil {
				held[k.URI] = msgSkillAdded(server.PublicName(k.Name), server.ID, target)
			} else {
				held[k.URI] = msgSkillChanged(server.PublicName(k.Name), target)
			}
		}
	}
	if !dirty {
		return held, p.reportLocked(key, "")
	}
	if err := p.saveLocked(); err != nil {
		for _, uri := range recorded {
			delete(sp.Skills, uri)
			held[uri] = msgSkillPinsUnwritable(uri)
		}
		if len(recorded) == 0 {
			return held, p.reportLocked(key, "")
		}
		return held, p.reportLocked(key, fmt.Sprintf("tool pins %s cannot be written (%v): %d skill(s) of server '%s' are held until it can be", p.path, err, len(recorded), server.ID))
	}
	return held, p.reportLocked(key, "")
}

// acceptSkills trusts the manifests a server's skills (or the one named
// name) serve now; it returns the names accepted.
func acceptSkills(sp *serverPins, name string) []string {
	var out []string
	for uri, pin := range sp.Skills {
		if pin.Changed == nil || name != "" && pin.Changed.Name != name && uri != name {
			continue
		}
		pin.Accepted, pin.Changed = pin.Changed, nil
		out = append(out, "skill "+pin.Accepted.Name)
	}
	return out
}

// The texts of held skills, which a model reads: they never repeat what
// the skill now says.
func msgSkillChanged(name, target string) string {
	return fmt.Sprintf("The skill '%s' is held: its files changed since they were pinned. An operator must review it (`evokore pins list`) and run `evokore pins accept %s` before it is served again.", name, target)
}

func msgSkillAdded(name, server, target string) string {
	return fmt.Sprintf("The skill '%s' is held: server '%s' added it after its skills were pinned. An operator must review it and run `evokore pins accept %s` before it is served.", name, server, target)
}

func msgSkillPinsUnreadable(name string) string {
	return fmt.Sprintf("The skill '%s' is held: the pins store cannot be read, so its files cannot be checked.", name)
}

func msgSkillPinsUnwritable(uri string) string {
	return fmt.Sprintf("The skill %s is held: its pin cannot be written, so it would prove nothing after a restart.", uri)
}

// HeldSkill is one held skill as `evokore pins list` shows it.
type HeldSkill struct {
	Server   string `json:"server"`
	Identity string `json:"identity,omitempty"`
	// URI is the child's SKILL.md; Target what `evokore pins accept`
	// takes for it.
	URI    string `json:"uri"`
	Target string `json:"target"`
	// Reason is "changed" or "added".
	Reason   string       `json:"reason"`
	Accepted *PinnedSkill `json:"accepted,omitempty"`
	Current  *PinnedSkill `json:"current"`
}

// HeldSkills lists every held skill, sorted by server and URI.
func (p *Pins) HeldSkills() []HeldSkill {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []HeldSkill
	for _, sp := range p.doc.Pinned {
		for uri, pin := range sp.Skills {
			if pin.Changed == nil {
				continue
			}
			h := HeldSkill{Server: sp.Server, Identity: sp.Identity, URI: uri, Target: p.targetLocked(sp.Server, sp.Identity, pin.Changed.Name),
				Reason: "added", Accepted: pin.Accepted, Current: pin.Changed}
			if pin.Accepted != nil {
				h.Reason = "changed"
			}
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b HeldSkill) int {
		return strings.Compare(a.Server+"\x00"+a.Identity+"\x00"+a.URI, b.Server+"\x00"+b.Identity+"\x00"+b.URI)
	})
	return out
}
