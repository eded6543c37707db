package skills

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"

	"github.com/evokore/evokore/internal/config"
)

// Problem codes of the diagnostics the index reports.
const (
	CodeFrontmatter = "skill-frontmatter"
	CodeUnclosed    = "skill-unclosed-frontmatter"
	CodeCollision   = "skill-key-collision"
	CodeURI         = "skill-uri-collision"
	CodeVersion     = "skill-version"
	CodeConstraint  = "skill-constraint"
	CodeRead        = "skill-read"
	CodeMissingDep  = "skill-missing-dependency"
	CodeDepVersion  = "skill-dependency-version"
	CodeConflict    = "skill-conflict"
	CodeCycle       = "skill-dependency-cycle"
)

// hintMarkers open the phrases that say when to use a skill.
var hintMarkers = []string{
	"this skill should be used when",
	"use this skill when",
	"use when",
	"perfect for",
	"triggers:",
}

// extractHints collects the text after each marker, up to the end of its
// sentence or line; a marker inside a hint already taken starts none.
func extractHints(texts ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range texts {
		lower := strings.ToLower(t)
		for _, m := range hintMarkers {
			from := 0
			for {
				i := strings.Index(lower[from:], m)
				if i < 0 {
					break
				}
				start := from + i + len(m)
				end := strings.IndexAny(lower[start:], ".\n")
				if end < 0 {
					end = len(lower) - start
				}
				h := strings.TrimSpace(t[start : start+end])
				h = strings.TrimLeft(h, ":,- ")
				if h != "" && !seen[h] {
					seen[h] = true
					out = append(out, h)
				}
				// On after the hint, not inside it: hints that overlapped
				// ("use when use when …" without a full stop) summed to
				// the square of the text, gigabytes for a 1 MB description.
				from = start + end
			}
		}
	}
	return out
}

var fence = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^```([A-Za-z0-9_+#.-]*)[ \t]*$") })

// parseBlocks finds the fenced blocks: an opening line of exactly three
// backticks and an optional language word, closed by a line of exactly
// three backticks.
func parseBlocks(body string, bodyLine int) []Block {
	var out []Block
	lines := strings.Split(body, "\n")
	for i := 0; i < len(lines); i++ {
		m := fence().FindStringSubmatch(strings.TrimRight(lines[i], "\r"))
		if m == nil {
			continue
		}
		closed := false
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimRight(lines[j], "\r \t") == "```" {
				out = append(out, Block{
					Lang: strings.ToLower(m[1]),
					Code: strings.Join(lines[i+1:j], "\n"),
					Line: bodyLine + i,
				})
				i = j
				closed = true
				break
			}
		}
		if !closed {
			// No closing line follows, so no later opener has one either:
			// scanning on from each of them made a file of unclosed
			// fences take time with the square of its lines.
			break
		}
	}
	return out
}

var mdLink = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\]\(([^)\s]+)\)`) })

// parseLinks returns the link targets that may name another skill:
// skill:// URIs and relative links to markdown files. Code blocks are
// skipped.
func parseLinks(body string, blocks []Block) []string {
	// Each block's code is cut where it stands, after the previous one:
	// replacing it anywhere in the whole text, block by block, took time
	// with blocks × length, minutes for a file of many small blocks.
	var kept strings.Builder
	rest := body
	for _, b := range blocks {
		i := strings.Index(rest, b.Code)
		if i < 0 {
			continue
		}
		kept.WriteString(rest[:i])
		rest = rest[i+len(b.Code):]
	}
	kept.WriteString(rest)
	text := kept.String()
	var out []string
	for _, m := range mdLink().FindAllStringSubmatch(text, -1) {
		t := m[1]
		if i := strings.IndexByte(t, '#'); i >= 0 {
			t = t[:i]
		}
		switch {
		case strings.HasPrefix(t, "skill://"):
			out = append(out, t)
		case strings.HasSuffix(strings.ToLower(t), ".md") && !strings.Contains(t, "://"):
			out = append(out, t)
		}
	}
	return out
}

// metadataText flattens metadata into "key.path value" fragments.
func metadataText(m map[string]any) string {
	var parts []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, x[k])
			}
		case []any:
			for _, e := range x {
				walk(prefix, e)
			}
		case nil:
		default:
			parts = append(parts, prefix+" "+fmt.Sprint(x))
		}
	}
	walk("", m)
	return strings.Join(parts, " ")
}

// candidate is a file the layout rules make a possible skill.
type candidate struct {
	rel      string // path below the root
	category string
	sub      string
	fallback string // name when the frontmatter has none
}

// parseSkill reads one candidate. ok is false when the file is not a skill
// (no frontmatter) or is malformed (then ds says why).
func parseSkill(c candidate, src []byte, display string) (s *Skill, ds config.Diagnostics, ok bool) {
	yamlSrc, body, bodyLine, has, closed := config.SplitSkillDocument(src)
	if !has {
		return nil, nil, false
	}
	if !closed {
		return nil, config.Diagnostics{{Position: config.Position{File: display, Line: 1}, Severity: config.SeverityError,
			Code: CodeUnclosed, Message: "frontmatter opened with '---' is never closed; the file is skipped"}}, false
	}
	fm, fds := config.ParseSkillFrontmatter(display, yamlSrc, 1)
	if fds != nil {
		for i := range fds {
			fds[i].Message += " (the skill is skipped)"
			fds[i].Code = CodeFrontmatter
		}
		return nil, fds, false
	}
	name := fm.Name
	if name == "" {
		name = c.fallback
	}
	desc := fm.Description
	if desc == "" {
		desc = "No description provided."
	}
	s = &Skill{
		Key:              strings.ToLower(c.category + "/" + name),
		Name:             name,
		Description:      desc,
		Category:         c.category,
		DeclaredCategory: fm.Category,
		Subcategory:      c.sub,
		Path:             c.rel,
		File:             display,
		Version:          fm.Version,
		Tags:             fm.Tags,
		Aliases:          fm.Aliases,
		Summaries:        fm.Summaries,
		MetadataText:     metadataText(fm.Metadata),
		Conflicts:        fm.Conflicts,
		Tools:            fm.Tools,
		Body:             body,
		BodyLine:         bodyLine,
		fallback:         c.fallback,
	}
	if s.Subcategory != "" {
		s.Depth = strings.Count(s.Subcategory, "/") + 1
	}
	s.URI = skillURI(s)
	s.Derived = derivedAliases(c)
	head := body
	if len(head) > 2500 {
		head = head[:2500]
	}
	s.Hints = extractHints(append([]string{desc, head}, fm.Summaries...)...)
	for _, h := range fm.ResolutionHints {
		if !contains(s.Hints, h) {
			s.Hints = append(s.Hints, h)
		}
	}
	s.Blocks = parseBlocks(body, bodyLine)
	s.links = parseLinks(body, s.Blocks)
	if fm.Version != "" {
		v, err := semver.NewVersion(fm.Version)
		if err != nil {
			ds = append(ds, config.Diagnostic{Position: config.Position{File: display, Line: 1}, Severity: config.SeverityWarning,
				Code: CodeVersion, Message: fmt.Sprintf("version %q is not a semantic version; constraints on this skill cannot be checked", fm.Version)})
		} else {
			s.version = v
		}
	}
	for _, r := range fm.Requires {
		req := Requirement{SkillRef: r}
		if r.Constraint != "" {
			c, err := semver.NewConstraint(r.Constraint)
			if err != nil {
				req.Err = err
				ds = append(ds, config.Diagnostic{Position: r.Pos, Severity: config.SeverityError, Code: CodeConstraint,
					Message: fmt.Sprintf("requires %q: %q is not a semver constraint: %v", r.Raw, r.Constraint, err)})
			} else {
				req.Constraints = c
			}
		}
		s.Requires = append(s.Requires, req)
	}
	return s, ds, true
}

// derivedAliases are the fallback name, every subcategory segment and
// every path segment (the category's included), without ".md" and
// without "SKILL".
func derivedAliases(c candidate) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSuffix(s, ".md")
		if s == "" || strings.EqualFold(s, "SKILL") || contains(out, s) {
			return
		}
		out = append(out, s)
	}
	add(c.fallback)
	for _, seg := range strings.Split(c.rel, "/") {
		add(seg)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ParseDocument checks that src is a skill document: frontmatter that
// validates, then a body. ok is false when there is no frontmatter at
// all; otherwise ds lists what is wrong with it, positioned in file.
func ParseDocument(file string, src []byte) (fm *config.SkillFrontmatter, ds config.Diagnostics, ok bool) {
	yamlSrc, _, _, has, closed := config.SplitSkillDocument(src)
	if !has {
		return nil, nil, false
	}
	if !closed {
		return nil, config.Diagnostics{{Position: config.Position{File: file, Line: 1}, Severity: config.SeverityError,
			Code: CodeUnclosed, Message: "frontmatter opened with '---' is never closed"}}, true
	}
	fm, ds = config.ParseSkillFrontmatter(file, yamlSrc, 1)
	return fm, ds, true
}
