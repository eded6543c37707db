package config

import (
	"errors"
	"io"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// parseSkillFast reads frontmatter that plainly satisfies #SkillFrontmatter
// without evaluating CUE. It reports ok=false for anything it cannot
// vouch for (errors, nulls in typed keys, anchors, odd tags, duplicate
// keys, several documents); the caller then asks CUE.
func parseSkillFast(file string, src []byte, lineOffset int) (*SkillFrontmatter, bool) {
	root, ok := plainDocument(file, src)
	if !ok {
		return nil, false
	}
	if root == nil || (root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null") {
		return &SkillFrontmatter{}, true // empty or null: an empty mapping
	}
	fields, ok := mapping(root)
	if !ok {
		return nil, false
	}
	// Every typed key must have its schema's shape; untyped keys may hold
	// anything, as the definition is open.
	for key, n := range fields {
		if shape, typed := skillShapes[key]; typed && !shape(n) {
			return nil, false
		}
	}
	fm := &SkillFrontmatter{}
	meta, _ := mapping(fields["metadata"])
	if meta != nil {
		fm.Metadata = map[string]any{}
		if fields["metadata"].Decode(&fm.Metadata) != nil {
			return nil, false
		}
	}
	fm.Name = trimmedString(fields["name"])
	fm.Description = trimmedString(fields["description"])
	fm.Category = trimmedString(fields["category"])
	fm.Version, _ = yamlScalar(fields["version"])
	if fm.Version == "" && meta != nil {
		fm.Version, _ = yamlScalar(meta["version"])
	}
	fm.Version = strings.TrimSpace(fm.Version)
	for _, n := range []*yaml.Node{fields["summary"], meta["summary"]} {
		if s := trimmedString(n); s != "" {
			fm.Summaries = append(fm.Summaries, s)
		}
	}
	fm.Tags = collectStrings(fields["tags"], meta["tags"])
	fm.Aliases = collectStrings(fields["alias"], fields["aliases"], meta["alias"], meta["aliases"], meta["original_command"])
	fm.ResolutionHints = collectStrings(fields["resolutionHints"])
	fm.Tools = toolNames(collectStrings(fields["tools"], fields["allowed-tools"]))
	fm.Requires = skillRefs(fields["requires"], file, lineOffset)
	fm.Conflicts = skillRefs(fields["conflicts"], file, lineOffset)
	return fm, true
}

// plainDocument decodes src as one YAML document that plain accepts and
// returns its root, nil for an empty document; ok=false for anything
// else. It runs the syntax check the CUE path runs first, so that both
// paths agree on what is YAML at all.
func plainDocument(file string, src []byte) (root *yaml.Node, ok bool) {
	src = unixNewlines(src)
	if checkYAML(file, src) != nil {
		return nil, false
	}
	dec := yaml.NewDecoder(strings.NewReader(string(src)))
	var doc yaml.Node
	err := dec.Decode(&doc)
	if errors.Is(err, io.EOF) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	var extra yaml.Node
	if dec.Decode(&extra) != io.EOF {
		return nil, false
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || !plain(&doc) {
		return nil, false
	}
	return doc.Content[0], true
}

// trimmedString is a string node's text, trimmed; "" for anything else.
func trimmedString(n *yaml.Node) string {
	s, _ := yamlString(n)
	return strings.TrimSpace(s)
}

// collectStrings gathers the strings (one, or a list) of the nodes in
// order, trimmed, without blanks or repeats.
func collectStrings(nodes ...*yaml.Node) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range nodes {
		list, _ := yamlStrings(n)
		for _, s := range list {
			s = strings.TrimSpace(s)
			if s != "" && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// skillRefs reads requires or conflicts: each entry a requirement string
// ("name >= 1.2") or a mapping {name, minVersion}, positioned in the
// Markdown file; entries without a name are left out.
func skillRefs(n *yaml.Node, file string, lineOffset int) []SkillRef {
	if n == nil {
		return nil
	}
	var out []SkillRef
	for _, e := range n.Content {
		r := SkillRef{Pos: Position{File: file, Line: e.Line + lineOffset, Col: e.Column}}
		if s, ok := yamlString(e); ok {
			r.Raw = s
			r.Name, r.Constraint = splitRequirement(s)
		} else {
			m, _ := mapping(e)
			r.Name = trimmedString(m["name"])
			r.Raw = r.Name
			if mv, _ := yamlScalar(m["minVersion"]); mv != "" {
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

// skillShapes are the typed keys of #SkillFrontmatter and the shape each
// must have, and metadataShapes those of its metadata block. A test reads
// the keys of schema/skill.cue and fails when these tables miss one, so
// the schema cannot gain a typed key the fast path lets through unchecked.
var skillShapes, metadataShapes map[string]func(*yaml.Node) bool

func init() {
	metadataShapes = map[string]func(*yaml.Node) bool{
		"tags": isStrings, "alias": isStrings, "aliases": isStrings,
		"summary": isString, "original_command": isString,
		"version": isScalar,
	}
	skillShapes = map[string]func(*yaml.Node) bool{
		"name":        func(n *yaml.Node) bool { s, ok := yamlString(n); return ok && s != "" },
		"description": isString, "category": isString, "summary": isString,
		"version": isScalar,
		"tags":    isStrings, "alias": isStrings, "aliases": isStrings, "resolutionHints": isStrings,
		"tools": isStrings, "allowed-tools": isStrings,
		"requires":  func(n *yaml.Node) bool { return isRefs(n, true) },
		"conflicts": func(n *yaml.Node) bool { return isRefs(n, false) },
		"metadata": func(n *yaml.Node) bool {
			m, ok := mapping(n)
			if !ok {
				return false
			}
			for k, v := range m {
				if shape, typed := metadataShapes[k]; typed && !shape(v) {
					return false
				}
			}
			return true
		},
	}
}

func isString(n *yaml.Node) bool  { _, ok := yamlString(n); return ok }
func isScalar(n *yaml.Node) bool  { _, ok := yamlScalar(n); return ok }
func isStrings(n *yaml.Node) bool { _, ok := yamlStrings(n); return ok }

// isRefs checks requires and conflicts: a list of names, or of mappings
// with a name (and, for requires, a scalar minVersion).
func isRefs(n *yaml.Node, minVersion bool) bool {
	if n.Kind != yaml.SequenceNode {
		return false
	}
	for _, e := range n.Content {
		if isString(e) {
			continue
		}
		m, ok := mapping(e)
		if !ok || !isString(m["name"]) {
			return false
		}
		if mv, set := m["minVersion"]; set && minVersion && !isScalar(mv) {
			return false
		}
	}
	return true
}

// plain reports whether a YAML tree uses no anchors, aliases, merge keys,
// explicit tags or keys other than strings: features whose meaning CUE
// should decide.
func plain(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode || n.Anchor != "" || (n.Tag != "" && n.Style&yaml.TaggedStyle != 0) {
		return false
	}
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!str", "!!null":
		case "!!bool":
			if n.Value != "true" && n.Value != "false" {
				return false
			}
		case "!!int", "!!float":
			if !simpleNumber().MatchString(strings.TrimPrefix(n.Value, "-")) {
				return false
			}
		default:
			return false
		}
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" || k.Value == "<<" {
				return false
			}
		}
	}
	for _, c := range n.Content {
		if !plain(c) {
			return false
		}
	}
	return true
}

// mapping returns a mapping node's fields, or ok=false when n is not a
// mapping of distinct plain string keys.
func mapping(n *yaml.Node) (map[string]*yaml.Node, bool) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, false
	}
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" || k.Value == "<<" {
			return nil, false
		}
		if _, dup := out[k.Value]; dup {
			return nil, false
		}
		out[k.Value] = n.Content[i+1]
	}
	return out, true
}

func yamlString(n *yaml.Node) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", false
	}
	return n.Value, true
}

// simpleNumber is a number whose text CUE renders back unchanged.
var simpleNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`) })

// yamlScalar accepts a string or a plainly written number.
func yamlScalar(n *yaml.Node) (string, bool) {
	if s, ok := yamlString(n); ok {
		return s, true
	}
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	if t := n.ShortTag(); (t == "!!int" || t == "!!float") && simpleNumber().MatchString(n.Value) {
		return n.Value, true
	}
	return "", false
}

func yamlStrings(n *yaml.Node) ([]string, bool) {
	if s, ok := yamlString(n); ok {
		return []string{s}, true
	}
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	for _, e := range n.Content {
		s, ok := yamlString(e)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
