package skills

import (
	"fmt"
	"strings"

	"github.com/evokore/evokore/internal/search"
)

// The texts the skill tools and prompts show. They live here, in one
// place, because the tools and the prompts render the same skills.

// NoWorkflow is resolve_workflow's answer when nothing fits.
func NoWorkflow(objective string) string {
	return fmt.Sprintf("No specific workflows found for '%s'. Proceed using your general knowledge.", objective)
}

// WorkflowOptions shape a workflow text.
type WorkflowOptions struct {
	// Wrap puts each body in <activated_skill> tags (the tool does; the
	// prompt does not).
	Wrap bool
	// MaxBody cuts each body to this many bytes; 0 keeps it whole.
	MaxBody int
}

// WorkflowText renders the skills chosen for an objective: a header, then
// per skill its place, description, why it matched and its instructions,
// then any dependency warnings.
func (ix *Index) WorkflowText(objective string, matches []Match, o WorkflowOptions) string {
	if len(matches) == 0 {
		return NoWorkflow(objective)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "EVOKORE-MCP injected %d workflow(s) for: %s\nFollow the instructions that fit the task; skip the parts that do not.\n", len(matches), objective)
	var warnings []string
	for _, m := range matches {
		s := m.Skill
		fmt.Fprintf(&b, "\n--- WORKFLOW: %s [%s] ---\n", s.Name, s.Where())
		fmt.Fprintf(&b, "Description: %s\n", s.Description)
		fmt.Fprintf(&b, "Why matched: %s\n", strings.Join(m.Reasons, "; "))
		body := cut(s.Body, o.MaxBody, s.URI)
		if o.Wrap {
			fmt.Fprintf(&b, "<activated_skill name=%q category=%q>\n%s\n</activated_skill>\n", s.Name, s.Category, strings.TrimSpace(body))
		} else {
			fmt.Fprintf(&b, "\n%s\n", strings.TrimSpace(body))
		}
		for _, w := range ix.Warnings(s) {
			warnings = append(warnings, s.Name+": "+w)
		}
	}
	if len(warnings) > 0 {
		b.WriteString("\nDependency warnings:\n")
		for _, w := range warnings {
			fmt.Fprintf(&b, "- %s\n", w)
		}
	}
	return b.String()
}

// cut shortens a body, saying where the rest is.
func cut(body string, limit int, uri string) string {
	if limit <= 0 || len(body) <= limit {
		return body
	}
	i := limit
	for i > 0 && !utf8Start(body[i]) {
		i--
	}
	return body[:i] + fmt.Sprintf("\n[... truncated; read %s for the rest]", uri)
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }

func refList(refs []string) string {
	if len(refs) == 0 {
		return "none"
	}
	return strings.Join(refs, ", ")
}

func (s *Skill) requiresList() []string {
	out := make([]string, len(s.Requires))
	for i, r := range s.Requires {
		out[i] = r.Name
		if r.Constraint != "" {
			out[i] += " (" + r.Constraint + ")"
		}
	}
	return out
}

func (s *Skill) conflictsList() []string {
	out := make([]string, len(s.Conflicts))
	for i, c := range s.Conflicts {
		out[i] = c.Name
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// HelpMarkdown is get_skill_help's answer: an overview, the full
// instructions and the dependency warnings.
func (ix *Index) HelpMarkdown(s *Skill) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Skill Overview: %s\n\n", s.Name)
	fmt.Fprintf(&b, "- **Category:** %s\n", s.Category)
	fmt.Fprintf(&b, "- **Subcategory:** %s\n", orDash(s.Subcategory))
	fmt.Fprintf(&b, "- **Version:** %s\n", orDash(s.Version))
	fmt.Fprintf(&b, "- **Requires:** %s\n", refList(s.requiresList()))
	fmt.Fprintf(&b, "- **Conflicts:** %s\n", refList(s.conflictsList()))
	if len(s.Aliases) > 0 {
		fmt.Fprintf(&b, "- **Aliases:** %s\n", strings.Join(s.Aliases, ", "))
	}
	if len(s.Tags) > 0 {
		fmt.Fprintf(&b, "- **Tags:** %s\n", strings.Join(s.Tags, ", "))
	}
	fmt.Fprintf(&b, "- **Resource:** %s\n", s.URI)
	fmt.Fprintf(&b, "- **Description:** %s\n", s.Description)
	if n := len(s.Blocks); n > 0 {
		fmt.Fprintf(&b, "- **Code blocks:** %d (list or run them with execute_skill)\n", n)
	}
	fmt.Fprintf(&b, "\n### Internal Instructions:\n%s\n", strings.TrimSpace(s.Body))
	if ws := ix.Warnings(s); len(ws) > 0 {
		b.WriteString("\n### Dependency warnings:\n")
		for _, w := range ws {
			fmt.Fprintf(&b, "- %s\n", w)
		}
	}
	return b.String()
}

// HelpPlain is the skill-help prompt's text.
func (ix *Index) HelpPlain(s *Skill) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Skill: %s\n", s.Name)
	fmt.Fprintf(&b, "Category: %s\n", s.Category)
	fmt.Fprintf(&b, "Subcategory: %s\n", orDash(s.Subcategory))
	fmt.Fprintf(&b, "Version: %s\n", orDash(s.Version))
	fmt.Fprintf(&b, "Description: %s\n", s.Description)
	fmt.Fprintf(&b, "Requires: %s\n", refList(s.requiresList()))
	fmt.Fprintf(&b, "Conflicts: %s\n", refList(s.conflictsList()))
	if ws := ix.Warnings(s); len(ws) > 0 {
		fmt.Fprintf(&b, "Dependency warnings: %s\n", strings.Join(ws, "; "))
	}
	fmt.Fprintf(&b, "\n%s\n", strings.TrimSpace(s.Body))
	return b.String()
}

// SearchLine is one search_skills result line.
func SearchLine(m Match) string {
	s := m.Skill
	return fmt.Sprintf("- **%s** [%s]: %s | matched on %s", s.Name, s.Where(), s.Description, strings.Join(m.Reasons, ", "))
}

// Signals renders how a match scored, for search_skills' explain: its
// tier, and for a relevance match the lexical score (relative to the
// best), the cosine in meaning and the fused score.
func (m Match) Signals() string {
	switch m.Tier {
	case TierAlias:
		return "tier alias exact"
	case TierPrefix:
		return "tier name prefix"
	}
	return search.Relevance("relevance", m.Lexical, m.Semantic, m.Score, m.Lexical == 0)
}

// Lookup finds a skill for get_skill_help and the skill-help prompt: the
// key, then the exact name, then the best search match. Unlike Resolve it
// may guess, so the caller must say which skill it shows.
func (ix *Index) Lookup(name string) *Skill {
	if s := ix.Resolve(name); s != nil {
		return s
	}
	if ms := ix.Search(name, 1); len(ms) > 0 {
		return ms[0].Skill
	}
	return nil
}
