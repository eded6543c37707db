package skills

import (
	"path"
	"strings"
)

// NextStep is a skill worth doing after another one, and why.
type NextStep struct {
	Skill  string `json:"skill"`
	Reason string `json:"reason"`
	// URI is the next skill's resource.
	URI string `json:"uri"`

	s *Skill
}

// maxNextSteps bounds the suggestions after one skill.
const maxNextSteps = 5

// linkGraph derives the skill graph from the library itself, so it is
// never stale and needs no build step:
//
//   - a skill's markdown links to other skills (skill:// URIs or relative
//     links to their files) are its author's suggested next steps;
//   - a skill that requires X builds on X, so it is a next step after X.
//
// Links come first, then dependents, each list in key order.
func (ix *Index) linkGraph() {
	for _, s := range ix.Skills {
		s.next = nil
	}
	add := func(from, to *Skill, reason string) {
		if from == nil || to == nil || from == to || len(from.next) >= maxNextSteps {
			return
		}
		for _, n := range from.next {
			if n.s == to {
				return
			}
		}
		from.next = append(from.next, NextStep{Skill: to.Name, Reason: reason, URI: to.URI, s: to})
	}
	for _, s := range ix.Skills {
		for _, l := range s.links {
			var to *Skill
			if strings.HasPrefix(l, URIScheme) {
				to = ix.ByURI(l)
			} else {
				to = ix.byPath[path.Clean(path.Join(path.Dir(s.Path), l))]
			}
			add(s, to, "linked from "+s.Name)
		}
	}
	for _, s := range ix.Skills {
		for _, r := range s.Requires {
			add(ix.Resolve(r.Name), s, "builds on "+r.Name+" (requires it)")
		}
	}
}

// Next returns the skills to suggest after s.
func (ix *Index) Next(s *Skill) []NextStep {
	out := make([]NextStep, len(s.next))
	copy(out, s.next)
	return out
}

// NextSkills are the skills behind Next.
func (ix *Index) NextSkills(s *Skill) []*Skill {
	out := make([]*Skill, len(s.next))
	for i, n := range s.next {
		out[i] = n.s
	}
	return out
}
