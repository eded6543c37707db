package skills

import (
	"fmt"
	"slices"
	"strings"

	"github.com/evokore/evokore/internal/config"
)

// Problems checks one skill's requires and conflicts against the index.
// References resolve by exact key or name, never by similarity: a missing
// dependency is reported missing. A constraint ("name@>=1.2.0", or
// minVersion) is checked with semver; note that semver ranges leave out
// prerelease versions unless the constraint names one.
func (ix *Index) Problems(s *Skill) config.Diagnostics {
	var out config.Diagnostics
	report := func(pos config.Position, sev config.Severity, code, format string, args ...any) {
		if pos.File == "" {
			pos = config.Position{File: s.File, Line: 1}
		}
		out = append(out, config.Diagnostic{Position: pos, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	for _, r := range s.Requires {
		dep := ix.Resolve(r.Name)
		switch {
		case dep == nil:
			report(r.Pos, config.SeverityError, CodeMissingDep, "Missing required skill: %s", r.Name)
		case dep == s:
			report(r.Pos, config.SeverityError, CodeMissingDep, "%s requires itself", s.Name)
		case r.Err != nil:
			report(r.Pos, config.SeverityError, CodeConstraint, "Required skill %s: %q is not a semver constraint", r.Name, r.Constraint)
		case r.Constraints == nil:
		case dep.SemVer() == nil && dep.Version == "":
			report(r.Pos, config.SeverityError, CodeDepVersion, "Required skill %s has no version, so %q cannot be satisfied", r.Name, r.Constraint)
		case dep.SemVer() == nil:
			report(r.Pos, config.SeverityError, CodeDepVersion, "Required skill %s has version %q, which is not semver, so %q cannot be checked", r.Name, dep.Version, r.Constraint)
		default:
			if ok, errs := r.Constraints.Validate(dep.SemVer()); !ok {
				why := make([]string, len(errs))
				for i, e := range errs {
					why[i] = e.Error()
				}
				report(r.Pos, config.SeverityError, CodeDepVersion, "%s version %s does not satisfy %q (%s)",
					r.Name, dep.Version, r.Constraint, strings.Join(why, "; "))
			}
		}
	}
	for _, c := range s.Conflicts {
		if other := ix.Resolve(c.Name); other != nil && other != s {
			report(c.Pos, config.SeverityError, CodeConflict, "Conflicts with installed skill: %s", other.Name)
		}
	}
	return out
}

// Warnings are a skill's dependency problems as plain sentences.
func (ix *Index) Warnings(s *Skill) []string {
	ps := ix.Problems(s)
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Message
	}
	return out
}

// AllProblems checks every skill's dependencies and looks for cycles in
// requires, for `evokore vet --skills`.
func (ix *Index) AllProblems() config.Diagnostics {
	var out config.Diagnostics
	for _, s := range ix.Skills {
		out = append(out, ix.Problems(s)...)
	}
	out = append(out, ix.cycles()...)
	out.Sort()
	return out
}

// cycles reports each requires cycle once, at the first skill of the
// cycle in key order.
func (ix *Index) cycles() config.Diagnostics {
	const (
		unvisited = iota
		active
		done
	)
	state := map[*Skill]int{}
	var out config.Diagnostics
	reported := map[string]bool{}
	var stack []*Skill
	var visit func(s *Skill)
	visit = func(s *Skill) {
		state[s] = active
		stack = append(stack, s)
		for _, r := range s.Requires {
			dep := ix.Resolve(r.Name)
			if dep == nil || dep == s {
				continue
			}
			switch state[dep] {
			case unvisited:
				visit(dep)
			case active:
				i := slices.Index(stack, dep)
				cycle := slices.Clone(stack[i:])
				// Name the cycle from its smallest key so it is reported once.
				min := 0
				for j, c := range cycle {
					if c.Key < cycle[min].Key {
						min = j
					}
				}
				cycle = append(cycle[min:], cycle[:min]...)
				names := make([]string, 0, len(cycle)+1)
				for _, c := range cycle {
					names = append(names, c.Name)
				}
				names = append(names, cycle[0].Name)
				key := strings.Join(names, " → ")
				if !reported[key] {
					reported[key] = true
					out = append(out, config.Diagnostic{Position: config.Position{File: cycle[0].File, Line: 1},
						Severity: config.SeverityWarning, Code: CodeCycle, Message: "requires cycle: " + key})
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[s] = done
	}
	for _, s := range ix.Skills {
		if state[s] == unvisited {
			visit(s)
		}
	}
	return out
}
