package config

import (
	"bytes"
	"fmt"
	"strings"

	"cuelang.org/go/cue"

	"github.com/evokore/evokore/schema"
)

// SkillFrontmatter is the YAML block at the top of a skill's markdown,
// validated against #SkillFrontmatter and with the spellings the skill
// libraries use merged: alias and aliases, top-level and metadata keys.
type SkillFrontmatter struct {
	Name        string
	Description string
	// Category is the category the file declares; the directory the file
	// sits in is authoritative, this one is only searchable.
	Category string
	// Summaries are summary and metadata.summary, in that order, when set.
	Summaries []string
	// Version is version, else metadata.version, as written ("" if unset).
	Version string
	// Tags merges tags and metadata.tags.
	Tags []string
	// Aliases merges alias, aliases, metadata.alias, metadata.aliases and
	// metadata.original_command.
	Aliases []string
	// Requires lists the skills this one builds on.
	Requires []SkillRef
	// Conflicts lists skills that must not be installed alongside.
	Conflicts       []SkillRef
	ResolutionHints []string
	// Tools merges tools and allowed-tools: tool names the skill uses.
	Tools []string
	// Metadata is the metadata block as written, nil when absent.
	Metadata map[string]any
}

// SkillRef names another skill from requires or conflicts.
type SkillRef struct {
	Name string
	// Constraint is a semver constraint ("" when none): the part after
	// '@' in "name@>=1.0.0", or ">= minVersion" from the object form.
	Constraint string
	// Raw is the entry as written, for messages.
	Raw string
	// Pos is where the entry was written in the markdown file.
	Pos Position
}

// SplitSkillDocument separates "---\n<yaml>\n---\n<body>". ok is false when
// the file does not open with a frontmatter fence (an ordinary markdown
// file, not a skill); closed is false when it opens one and never closes
// it. yamlSrc has CRLF line ends turned into LF; bodyLine is the 1-based
// line the body starts on. It is the one place that finds a skill's
// frontmatter; ParseSkillFrontmatter reads what it returns.
func SplitSkillDocument(src []byte) (yamlSrc []byte, body string, bodyLine int, ok, closed bool) {
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	if !bytes.HasPrefix(src, []byte("---\n")) && !bytes.HasPrefix(src, []byte("---\r\n")) {
		return nil, "", 0, false, false
	}
	rest := src[bytes.IndexByte(src, '\n')+1:]
	line := 2
	start := rest
	for len(rest) > 0 {
		end := bytes.IndexByte(rest, '\n')
		cur := rest
		next := []byte(nil)
		if end >= 0 {
			cur, next = rest[:end], rest[end+1:]
		}
		if string(bytes.TrimRight(cur, "\r")) == "---" {
			y := start[:len(start)-len(rest)]
			y = bytes.ReplaceAll(y, []byte("\r\n"), []byte("\n"))
			b := strings.ReplaceAll(string(next), "\r\n", "\n")
			return y, b, line + 1, true, true
		}
		rest = next
		line++
	}
	return nil, "", 0, true, false
}

// ParseSkillFrontmatter validates the YAML frontmatter of a skill file.
// file names the markdown file and lineOffset is the number of lines
// before the YAML in it (1 when the file opens with "---"), so that every
// diagnostic points at the markdown file's own lines.
//
// #SkillFrontmatter is the contract. Evaluating it costs about 2 ms per
// file, too slow for libraries of thousands of skills, so a plain YAML
// reading of the same rules runs first; it accepts only what it can prove
// the schema accepts, and everything else (errors included) goes through
// CUE, which has the last word and positions the errors. Tests check that
// both readings agree (on samples, under fuzzing and on every skill of the
// starter library) and that the fast reader checks exactly the keys the
// schema types.
func ParseSkillFrontmatter(file string, yamlSrc []byte, lineOffset int) (*SkillFrontmatter, Diagnostics) {
	if fm, ok := parseSkillFast(file, yamlSrc, lineOffset); ok {
		return fm, nil
	}
	return parseSkillCUE(file, yamlSrc, lineOffset)
}

func parseSkillCUE(file string, yamlSrc []byte, lineOffset int) (fm *SkillFrontmatter, ds Diagnostics) {
	// CUE's YAML reader panics on some malformed input (such as
	// "\r\r0"); a bad skill file must be reported, never crash the router.
	defer func() {
		if r := recover(); r != nil {
			fm, ds = nil, Diagnostics{errAt(Position{File: file, Line: lineOffset + 1}, "syntax",
				"cannot parse the frontmatter as YAML (%v)", r)}
		}
	}()
	doc, ds := validate(file, yamlSrc, formatYAML, schema.SkillFrontmatter)
	if ds != nil {
		for i := range ds {
			if ds[i].Line > 0 {
				ds[i].Line += lineOffset
			}
		}
		return nil, ds
	}
	shift := func(p Position) Position {
		if p.Line > 0 {
			p.Line += lineOffset
		}
		return p
	}
	v := doc.value
	fm = &SkillFrontmatter{
		Name:        stringAt(v, "name"),
		Description: stringAt(v, "description"),
		Category:    stringAt(v, "category"),
		Version:     scalarAt(v, "version"),
	}
	if fm.Version == "" {
		fm.Version = scalarAt(v, "metadata.version")
	}
	for _, p := range []string{"summary", "metadata.summary"} {
		if s := stringAt(v, p); s != "" {
			fm.Summaries = append(fm.Summaries, s)
		}
	}
	fm.Tags = stringsAt(v, "tags", "metadata.tags")
	fm.Aliases = stringsAt(v, "alias", "aliases", "metadata.alias", "metadata.aliases", "metadata.original_command")
	fm.ResolutionHints = stringsAt(v, "resolutionHints")
	fm.Tools = toolNames(stringsAt(v, "tools", `"allowed-tools"`))
	if m := v.LookupPath(cue.ParsePath("metadata")); m.Exists() {
		fm.Metadata = map[string]any{}
		if err := m.Decode(&fm.Metadata); err != nil {
			return nil, doc.decodeErr(err)
		}
	}
	refs := func(key string) []SkillRef {
		var out []SkillRef
		list, err := v.LookupPath(cue.ParsePath(key)).List()
		if err != nil {
			return nil
		}
		for i := 0; list.Next(); i++ {
			e := list.Value()
			r := SkillRef{Pos: shift(doc.pos.at(file, key, fmt.Sprint(i)))}
			switch e.IncompleteKind() {
			case cue.StringKind:
				r.Raw, _ = e.String()
				r.Name, r.Constraint = splitRequirement(r.Raw)
			default:
				r.Name = strings.TrimSpace(stringAt(e, "name"))
				r.Raw = r.Name
				if mv := scalarAt(e, "minVersion"); mv != "" {
					r.Constraint = ">= " + mv
					r.Raw += " (minVersion " + mv + ")"
				}
			}
			if r.Name != "" {
				out = append(out, r)
			}
		}
		return out
	}
	fm.Requires = refs("requires")
	fm.Conflicts = refs("conflicts")
	return fm, nil
}

// splitRequirement splits "name@constraint"; a name without '@' has no
// constraint.
func splitRequirement(s string) (name, constraint string) {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "@"); i > 0 {
		return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
	}
	return s, ""
}

func stringAt(v cue.Value, path string) string {
	s, err := v.LookupPath(cue.ParsePath(path)).String()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// scalarAt renders a string or number as written; versions such as 1.10
// are numbers in YAML and must keep their digits.
func scalarAt(v cue.Value, path string) string {
	x := v.LookupPath(cue.ParsePath(path))
	switch x.IncompleteKind() {
	case cue.StringKind:
		s, _ := x.String()
		return strings.TrimSpace(s)
	case cue.IntKind, cue.FloatKind, cue.NumberKind:
		return fmt.Sprint(x)
	}
	return ""
}

// stringsAt collects the strings at each path, each a string or a list of
// strings, without duplicates.
func stringsAt(v cue.Value, paths ...string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, p := range paths {
		x := v.LookupPath(cue.ParsePath(p))
		switch x.IncompleteKind() {
		case cue.StringKind:
			s, _ := x.String()
			add(s)
		case cue.ListKind:
			it, err := x.List()
			if err != nil {
				continue
			}
			for it.Next() {
				if s, err := it.Value().String(); err == nil {
					add(s)
				}
			}
		}
	}
	return out
}

// toolNames splits the comma-separated form of allowed-tools and drops
// argument patterns such as "Bash(git:*)".
func toolNames(in []string) []string {
	var out []string
	for _, s := range in {
		for _, f := range strings.Split(s, ",") {
			f = strings.TrimSpace(f)
			if i := strings.IndexByte(f, '('); i >= 0 {
				f = strings.TrimSpace(f[:i])
			}
			if f != "" {
				out = append(out, f)
			}
		}
	}
	return out
}
