package skills

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
)

// writeTree writes files (path → content) below a new directory.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func skillDoc(name, desc string, extra ...string) string {
	fm := "---\nname: " + strconv.Quote(name) + "\ndescription: " + strconv.Quote(desc) + "\n"
	for _, e := range extra {
		fm += e + "\n"
	}
	return fm + "---\n\n# " + name + "\n\nBody of " + name + ".\n"
}

func buildDir(t testing.TB, root string) *Index {
	t.Helper()
	return Build(Source{FS: os.DirFS(root), Dir: root, Label: "SKILLS"})
}

func keys(ix *Index) []string {
	var out []string
	for _, s := range ix.Skills {
		out = append(out, s.Key)
	}
	return out
}

func TestLayoutRules(t *testing.T) {
	root := writeTree(t, map[string]string{
		"top-level.md":                        skillDoc("ignored-top", "top-level files are not skills"),
		"Dev Tools/lint/SKILL.md":             skillDoc("lint", "Run the linters."),
		"Dev Tools/notes.md":                  skillDoc("notes", "A markdown skill next to directories."),
		"Dev Tools/README.md":                 "# Just docs\n\nNo frontmatter: not a skill.\n",
		"Dev Tools/SKILL.md":                  skillDoc("category-file", "SKILL.md directly in a category is not a candidate"),
		"Dev Tools/lint/extra.md":             skillDoc("lint-extra", "A second file inside a skill directory."),
		"Dev Tools/lint/references/deep.md":   skillDoc("deep-ref", "A reference leaf."),
		"Dev Tools/unnamed/SKILL.md":          "---\ndescription: Named after its directory.\n---\nbody\n",
		"Dev Tools/node_modules/pkg/SKILL.md": skillDoc("from-node-modules", "skipped"),
		"Dev Tools/scripts/SKILL.md":          skillDoc("scripts-skill", "skipped: scripts is on the skip list"),
		"Dev Tools/lint/assets/a.md":          skillDoc("asset", "skipped"),
		"node_modules/x/SKILL.md":             skillDoc("top-skip", "skipped category"),
		"Ops/a/b/c/d/e/f/SKILL.md":            skillDoc("depth-six", "SKILL.md six levels below the category"),
		"Ops/a/b/c/d/e/f/g/SKILL.md":          skillDoc("depth-seven", "beyond the walk"),
		"Ops/a/b/c/d/e/leaf.md":               skillDoc("leaf-five", "a file five levels down"),
		"Ops/a/b/c/d/e/f/leaf6.md":            skillDoc("leaf-six", "a file six levels down is beyond the walk"),
		"Ops/crlf/SKILL.md":                   "---\r\nname: crlf\r\ndescription: Windows line ends.\r\n---\r\nBody.\r\n",
		"Ops/nodesc/SKILL.md":                 "---\nname: nodesc\n---\n",
	})
	// Symlinks are never followed.
	if err := os.Symlink(filepath.Join(root, "Dev Tools", "lint"), filepath.Join(root, "Dev Tools", "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "Dev Tools", "notes.md"), filepath.Join(root, "Dev Tools", "linked-notes.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "Ops"), filepath.Join(root, "Linked Category")); err != nil {
		t.Fatal(err)
	}

	ix := buildDir(t, root)
	want := []string{
		"dev tools/deep-ref", "dev tools/lint", "dev tools/lint-extra", "dev tools/notes", "dev tools/unnamed",
		"ops/crlf", "ops/depth-six", "ops/leaf-five", "ops/nodesc",
	}
	if got := keys(ix); !slices.Equal(got, want) {
		t.Fatalf("keys:\n got %v\nwant %v\ndiagnostics: %v", got, want, ix.Diagnostics)
	}
	if len(ix.Diagnostics) != 0 {
		t.Errorf("unexpected diagnostics: %v", ix.Diagnostics)
	}
	cases := []struct {
		key, sub string
		depth    int
		uri      string
	}{
		{"dev tools/lint", "", 0, "skill://Dev-Tools/lint"},
		{"dev tools/notes", "", 0, "skill://Dev-Tools/notes"},
		{"dev tools/lint-extra", "lint", 1, "skill://Dev-Tools/lint/lint-extra"},
		{"dev tools/deep-ref", "lint/references", 2, "skill://Dev-Tools/lint/references/deep-ref"},
		{"ops/depth-six", "a/b/c/d/e", 5, "skill://Ops/a/b/c/d/e/depth-six"},
		{"ops/leaf-five", "a/b/c/d/e", 5, "skill://Ops/a/b/c/d/e/leaf-five"},
	}
	for _, c := range cases {
		s := ix.ByKey(c.key)
		if s.Subcategory != c.sub || s.Depth != c.depth || s.URI != c.uri {
			t.Errorf("%s: sub %q depth %d uri %s; want %q %d %s", c.key, s.Subcategory, s.Depth, s.URI, c.sub, c.depth, c.uri)
		}
		if ix.ByURI(c.uri) != s {
			t.Errorf("ByURI(%s) does not find %s", c.uri, c.key)
		}
	}
	if s := ix.ByURI("skill://Dev Tools/lint"); s == nil || s.Key != "dev tools/lint" {
		t.Errorf("ByURI with the raw category name: %v", s)
	}
	if s := ix.ByKey("ops/crlf"); s.Description != "Windows line ends." || strings.Contains(s.Body, "\r") {
		t.Errorf("CRLF skill: %+v", s)
	}
	if s := ix.ByKey("ops/nodesc"); s.Description != "No description provided." {
		t.Errorf("default description: %q", s.Description)
	}
	deep := ix.ByKey("dev tools/deep-ref")
	for _, a := range []string{"deep", "Dev Tools", "lint", "references"} {
		if !slices.Contains(deep.Derived, a) {
			t.Errorf("derived aliases %v lack %q", deep.Derived, a)
		}
	}
	if slices.Contains(ix.ByKey("dev tools/lint").Derived, "SKILL") {
		t.Errorf("SKILL is never a derived alias")
	}
}

func TestMalformedFrontmatterIsReportedAndSkipped(t *testing.T) {
	root := writeTree(t, map[string]string{
		"cat/good/SKILL.md":     skillDoc("good", "Fine."),
		"cat/badtags/SKILL.md":  "---\nname: badtags\ndescription: x\ntags: {a: 1}\n---\nbody\n",
		"cat/badyaml/SKILL.md":  "---\nname: badyaml\n\tdescription: tab\n---\nbody\n",
		"cat/unclosed/SKILL.md": "---\nname: unclosed\ndescription: never closed\n",
		"cat/badreq/SKILL.md":   "---\nname: badreq\ndescription: x\nrequires:\n  - good@>>1\n---\nbody\n",
		"cat/badver/SKILL.md":   "---\nname: badver\ndescription: x\nversion: banana\n---\nbody\n",
	})
	ix := buildDir(t, root)
	if got := keys(ix); !slices.Equal(got, []string{"cat/badreq", "cat/badver", "cat/good"}) {
		t.Fatalf("keys %v", got)
	}
	type want struct {
		file string
		line int
		code string
		sev  config.Severity
	}
	wants := []want{
		{"SKILLS/cat/badreq/SKILL.md", 5, CodeConstraint, config.SeverityError},
		{"SKILLS/cat/badtags/SKILL.md", 4, CodeFrontmatter, config.SeverityError},
		{"SKILLS/cat/badver/SKILL.md", 1, CodeVersion, config.SeverityWarning},
		{"SKILLS/cat/badyaml/SKILL.md", 3, CodeFrontmatter, config.SeverityError},
		{"SKILLS/cat/unclosed/SKILL.md", 1, CodeUnclosed, config.SeverityError},
	}
	if len(ix.Diagnostics) != len(wants) {
		t.Fatalf("diagnostics:\n%v", ix.Diagnostics)
	}
	for i, w := range wants {
		d := ix.Diagnostics[i]
		if d.File != w.file || d.Line != w.line || d.Code != w.code || d.Severity != w.sev {
			t.Errorf("diagnostic %d = %s; want %s:%d %s %s", i, d, w.file, w.line, w.sev, w.code)
		}
	}
}

func TestKeyCollisionHasADeterministicWinner(t *testing.T) {
	files := map[string]string{
		"cat/deep/dup/SKILL.md": skillDoc("dup", "the deeper one"),
		"cat/dup/SKILL.md":      skillDoc("dup", "the shallow one"),
		"cat/a-dup.md":          skillDoc("dup", "same depth, but a-dup.md sorts before dup/SKILL.md"),
	}
	for range 5 {
		ix := buildDir(t, writeTree(t, files))
		s := ix.ByKey("cat/dup")
		if s == nil || s.Description != "same depth, but a-dup.md sorts before dup/SKILL.md" {
			t.Fatalf("winner: %+v", s)
		}
		var collisions []string
		for _, d := range ix.Diagnostics {
			if d.Code == CodeCollision {
				collisions = append(collisions, d.File)
			}
		}
		if !slices.Equal(collisions, []string{"SKILLS/cat/deep/dup/SKILL.md", "SKILLS/cat/dup/SKILL.md"}) {
			t.Fatalf("collisions reported: %v", collisions)
		}
	}
}

func TestURICollisionGetsADistinctURI(t *testing.T) {
	ix := buildDir(t, writeTree(t, map[string]string{
		"cat/a/SKILL.md": skillDoc("my skill", "space"),
		"cat/b/SKILL.md": skillDoc("my_skill", "underscore"),
	}))
	a, b := ix.ByKey("cat/my skill"), ix.ByKey("cat/my_skill")
	if a.URI == b.URI {
		t.Fatalf("both skills are served as %s", a.URI)
	}
	if ix.ByURI(a.URI) != a || ix.ByURI(b.URI) != b {
		t.Fatalf("URIs do not read back: %s %s", a.URI, b.URI)
	}
}

func TestFieldsHintsBlocksAndLinks(t *testing.T) {
	root := writeTree(t, map[string]string{
		"cat/main/SKILL.md": `---
name: main
description: Does the main thing. Use when the main thing is needed.
summary: Perfect for quick checks.
category: Declared Elsewhere
version: 1.2.3
tags: [one, two]
aliases: main-alias
metadata:
  tags: three
  alias: meta-alias
  owner: {team: platform}
resolutionHints: [explicit hint]
---
# Main

Triggers: a failing build.

` + "```bash\necho one\n```\n\nText.\n\n```\nno language\n```\n\n```python\nprint('two')\n```\n" + `
See [next](skill://cat/next) and [sibling](../other/SKILL.md) and [web](https://example.com/x.md).
`,
		"cat/next/SKILL.md":  skillDoc("next", "Next."),
		"cat/other/SKILL.md": skillDoc("other", "Other.", "requires: [main]"),
	})
	ix := buildDir(t, root)
	s := ix.ByName("main")
	if s.DeclaredCategory != "Declared Elsewhere" || s.Category != "cat" || s.Version != "1.2.3" || s.SemVer() == nil {
		t.Errorf("fields: %+v", s)
	}
	if !slices.Equal(s.Tags, []string{"one", "two", "three"}) || !slices.Equal(s.Aliases, []string{"main-alias", "meta-alias"}) {
		t.Errorf("tags %v aliases %v", s.Tags, s.Aliases)
	}
	for _, h := range []string{"the main thing is needed", "quick checks", "a failing build", "explicit hint"} {
		if !slices.Contains(s.Hints, h) {
			t.Errorf("hints %q lack %q", s.Hints, h)
		}
	}
	if !strings.Contains(s.MetadataText, "owner.team platform") {
		t.Errorf("metadata text %q", s.MetadataText)
	}
	if len(s.Blocks) != 3 || s.Blocks[0].Lang != "bash" || s.Blocks[0].Code != "echo one" || s.Blocks[1].Lang != "" || s.Blocks[2].Lang != "python" {
		t.Fatalf("blocks: %+v", s.Blocks)
	}
	if s.Blocks[0].Line != 19 {
		t.Errorf("first block at line %d, want 19", s.Blocks[0].Line)
	}
	var next []string
	for _, n := range ix.Next(s) {
		next = append(next, n.Skill+" ("+n.Reason+")")
	}
	want := []string{"next (linked from main)", "other (linked from main)"}
	if !slices.Equal(next, want) {
		t.Errorf("next steps %v, want %v", next, want)
	}
	if n := ix.Next(ix.ByName("next")); len(n) != 0 {
		t.Errorf("next has no links and no dependents: %v", n)
	}
}

func TestDependentsAreNextSteps(t *testing.T) {
	ix := buildDir(t, writeTree(t, map[string]string{
		"cat/base/SKILL.md":  skillDoc("base", "Base."),
		"cat/child/SKILL.md": skillDoc("child", "Builds on base.", "requires: [base@>=0.0.0]"),
	}))
	n := ix.Next(ix.ByName("base"))
	if len(n) != 1 || n[0].Skill != "child" || !strings.Contains(n[0].Reason, "requires") {
		t.Fatalf("next steps of base: %+v", n)
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	files := map[string]string{}
	for i := range 60 {
		files["c"+string(rune('a'+i%5))+"/s"+string(rune('a'+i%26))+string(rune('a'+i/26))+"/SKILL.md"] = skillDoc("s"+string(rune('a'+i%26))+string(rune('a'+i/26)), "skill")
	}
	root := writeTree(t, files)
	first := keys(buildDir(t, root))
	for range 5 {
		if got := keys(buildDir(t, root)); !slices.Equal(got, first) {
			t.Fatalf("order changed:\n%v\n%v", first, got)
		}
	}
}

// A frontmatter nested deeper than config.MaxYAMLDepth is skipped with a
// diagnostic, at once: the YAML parsers take time that grows with the
// square of the nesting, and 200 KB of "[" kept indexing busy for minutes.
func TestDeeplyNestedFrontmatterIsSkippedQuickly(t *testing.T) {
	const n = 100_000
	root := writeTree(t, map[string]string{
		"c/flow/SKILL.md":  "---\nname: flow\ndescription: x\nmetadata: " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n---\nbody\n",
		"c/block/SKILL.md": "---\nname: block\ndescription: x\nmetadata:\n  k:\n    " + strings.Repeat("- ", n) + "x\n---\nbody\n",
		"c/fine/SKILL.md":  skillDoc("fine", "An ordinary skill next to them."),
	})
	ix := buildDir(t, root)
	if got := keys(ix); !slices.Equal(got, []string{"c/fine"}) {
		t.Errorf("skills = %v, want only c/fine", got)
	}
	for _, f := range []string{"c/flow/SKILL.md", "c/block/SKILL.md"} {
		found := false
		for _, d := range ix.Diagnostics {
			if strings.HasSuffix(d.File, f) && strings.Contains(d.Message, "nest more than") {
				found = true
			}
		}
		if !found {
			t.Errorf("no nesting diagnostic for %s in %v", f, ix.Diagnostics)
		}
	}
}

// A body of unclosed fences, or of very many small blocks, indexes at
// once: each unclosed opener used to scan to the end of the file, and
// each block's code was cut from the whole text, both taking time with
// the square of the file's size (minutes for 1 MB).
func TestManyFencesIndexQuickly(t *testing.T) {
	const n = 200_000
	root := writeTree(t, map[string]string{
		"c/unclosed/SKILL.md": skillDoc("unclosed", "Only opening fences.") + strings.Repeat("```a\n", n),
		"c/blocks/SKILL.md":   skillDoc("blocks", "Many small blocks.") + strings.Repeat("```sh\nx\n```\n", n/2) + "\nSee [next](../unclosed/SKILL.md).\n",
	})
	ix := buildDir(t, root)
	if s := ix.ByKey("c/unclosed"); s == nil || len(s.Blocks) != 0 {
		t.Errorf("c/unclosed = %+v, want a skill with no blocks", s)
	}
	s := ix.ByKey("c/blocks")
	if s == nil || len(s.Blocks) != n/2 || s.Blocks[n/2-1].Code != "x" {
		t.Fatalf("c/blocks has %d blocks, want %d", len(s.Blocks), n/2)
	}
	if !slices.Contains(s.links, "../unclosed/SKILL.md") {
		t.Errorf("the link after the blocks is lost: %v", s.links)
	}
}

// A description that repeats a hint marker without a full stop ("use when
// use when …") makes hints that add up to its length, not its square:
// each marker used to start a hint running to the end of the text, and
// the first search indexed all of them (gigabytes, the router killed,
// for a 1 MB description fetch_skill accepts).
func TestRepeatedHintMarkersStayLinear(t *testing.T) {
	desc := strings.Repeat("use when ", 8000)
	root := writeTree(t, map[string]string{
		"c/markers/SKILL.md": "---\nname: markers\ndescription: \"" + desc + "\"\n---\nbody\n",
		"c/fine/SKILL.md":    skillDoc("fine", "Use when the task is ordinary."),
	})
	ix := buildDir(t, root)
	total := 0
	for _, h := range ix.ByKey("c/markers").Hints {
		total += len(h)
	}
	if total > len(desc) {
		t.Errorf("hints hold %d bytes of a %d-byte description", total, len(desc))
	}
	if ms := ix.Search("ordinary task", 3); len(ms) == 0 || ms[0].Skill.Key != "c/fine" {
		t.Errorf("search = %v", ms)
	}
}

// The pathological skill files of the tests above, indexed: each takes
// time with its size, where it took the size's square (minutes at 1 MB).
func BenchmarkIndexPathologicalSkills(b *testing.B) {
	const n = 100_000
	for _, tc := range []struct{ name, doc string }{
		{"nested frontmatter", "---\nname: flow\ndescription: x\nmetadata: " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n---\nbody\n"},
		{"unclosed fences", skillDoc("unclosed", "Only opening fences.") + strings.Repeat("```a\n", 2*n)},
		{"many blocks", skillDoc("blocks", "Many small blocks.") + strings.Repeat("```sh\nx\n```\n", n)},
		{"repeated hint markers", "---\nname: markers\ndescription: \"" + strings.Repeat("use when ", n/10) + "\"\n---\nbody\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			root := writeTree(b, map[string]string{"c/x/SKILL.md": tc.doc})
			for b.Loop() {
				buildDir(b, root).Search("ordinary task", 3)
			}
		})
	}
}
