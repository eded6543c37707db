package config

import (
	"encoding/json"
	"io/fs"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue"

	starter "github.com/evokore/evokore/SKILLS"
	"github.com/evokore/evokore/schema"
)

// skillSamples are frontmatters the fast reader and CUE must judge alike.
var skillSamples = []string{
	"",
	"# only a comment\n",
	"null\n",
	"name: release-readiness\ndescription: Check a release\n",
	"name: a\nversion: 1.10\n",
	"name: a\nversion: \"2.0.0\"\n",
	"name: a\nversion: 01\n",
	"name: a\nversion: 0x10\n",
	"name: a\nversion: 1e3\n",
	"name: a\ntags: [release, ci]\naliases: ship\n",
	"name: a\nalias: [x, y]\nmetadata:\n  aliases: [z]\n  original_command: /ship\n  tags: one\n",
	"name: a\nrequires:\n  - code-review@>=1.0.0\n  - {name: foo, minVersion: 2}\n  - name: bar\n    minVersion: \"1.2.3\"\n    note: extra keys are fine\n",
	"name: a\nconflicts: [legacy-tool, {name: other}]\n",
	"name: a\nmetadata:\n  summary: short\n  version: 3.1\n  nested: {deep: [1, 2, {x: y}]}\n",
	"name: a\nallowed-tools: Bash(git:*), Read, Grep\ntools: [github_search]\n",
	"name: a\nlicense: MIT\nmodel: opus\narchetype: null\n",
	"name: a\nresolutionHints: [when shipping]\n",
	// Wrong shapes: CUE must reject them.
	"name: \"\"\n",
	"name: 5\n",
	"name: a\ndescription:\n",
	"name: a\ndescription: [x]\n",
	"name: a\ntags: {a: 1}\n",
	"name: a\ntags: [1, 2]\n",
	"name: a\nrequires: foo\n",
	"name: a\nrequires: [1]\n",
	"name: a\nrequires: [{minVersion: 1}]\n",
	"name: a\nrequires: [{name: x, minVersion: [1]}]\n",
	"name: a\nconflicts: [[x]]\n",
	"name: a\nmetadata: five\n",
	"name: a\nmetadata: {summary: [x]}\n",
	"name: a\nversion: true\n",
	"name: a\nversion: 2024-01-01\n",
	"- a\n- b\n",
	"just text\n",
	"name: a\nname: b\n",
	"name: &n a\nalias: *n\n",
	"name: !!str a\n",
	"name: a\ntags: [a\n",
	"name: a\n---\nname: b\n",
	"base: &b {x: 1}\nother:\n  <<: *b\n",
	"name: a\n1: one\n",
	// Found by FuzzSkillFrontmatter.
	"\r\r0",
	"#! ",
	"A: [A: ]",
	"e: &b\n <<: * ",
	"caay: 8\nmetadata:\n  yaabxra: 0\n  vecsioa: 1AX\n  yesteZ: {deex: [{ 0}]} ",
	"A : \nmetadata:\n  summary: A\n  version: 0\n  A00000: {A000: [080,{A}]}",
}

func TestSkillFrontmatterFastPathAgreesWithCUE(t *testing.T) {
	for _, src := range skillSamples {
		checkSkillAgreement(t, src)
	}
}

func checkSkillAgreement(t *testing.T, src string) {
	t.Helper()
	fast, ok := parseSkillFast("s.md", []byte(src), 1)
	slow, ds := parseSkillCUE("s.md", []byte(src), 1)
	if !ok {
		return // CUE decides alone
	}
	if ds != nil && (strings.Contains(ds.Error(), "cannot parse the frontmatter as YAML (") || strings.Contains(ds.Error(), "cannot parse the file: ")) {
		return // CUE's reader crashed on input yaml.v3 reads; nothing to compare
	}
	if ds != nil {
		t.Fatalf("fast path accepted what CUE rejects:\n%s\nCUE: %v", src, ds)
	}
	fj, _ := json.Marshal(fast.Metadata)
	sj, _ := json.Marshal(slow.Metadata)
	if string(fj) != string(sj) {
		t.Errorf("metadata differs for %q:\nfast %s\ncue  %s", src, fj, sj)
	}
	fast.Metadata, slow.Metadata = nil, nil
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("readings differ for %q:\nfast %+v\ncue  %+v", src, fast, slow)
	}
}

func FuzzSkillFrontmatter(f *testing.F) {
	for _, s := range skillSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkSkillAgreement(t, src)
	})
}

func TestParseSkillFrontmatterFields(t *testing.T) {
	src := "name: release-readiness\ndescription: Check a release\nversion: 1.10\n" +
		"tags: [release, ci]\nmetadata:\n  tags: [ship]\n  summary: Use when a tag is near.\n" +
		"aliases: [ship-check]\nrequires:\n  - code-review@>=1.0.0\n  - {name: testing-strategy, minVersion: 2}\n" +
		"conflicts: [legacy-release]\nallowed-tools: Bash(git:*), Read\n"
	fm, ds := ParseSkillFrontmatter("SKILLS/x/SKILL.md", []byte(src), 1)
	if ds != nil {
		t.Fatal(ds)
	}
	if fm.Name != "release-readiness" || fm.Version != "1.10" || fm.Description != "Check a release" {
		t.Errorf("scalars: %+v", fm)
	}
	if want := []string{"release", "ci", "ship"}; !reflect.DeepEqual(fm.Tags, want) {
		t.Errorf("tags = %v, want %v", fm.Tags, want)
	}
	if want := []string{"Bash", "Read"}; !reflect.DeepEqual(fm.Tools, want) {
		t.Errorf("tools = %v, want %v", fm.Tools, want)
	}
	if len(fm.Requires) != 2 {
		t.Fatalf("requires = %+v", fm.Requires)
	}
	r0, r1 := fm.Requires[0], fm.Requires[1]
	if r0.Name != "code-review" || r0.Constraint != ">=1.0.0" || r0.Pos.Line != 11 {
		t.Errorf("requires[0] = %+v (want line 11 of the markdown)", r0)
	}
	if r1.Name != "testing-strategy" || r1.Constraint != ">= 2" || r1.Pos.Line != 12 {
		t.Errorf("requires[1] = %+v", r1)
	}
	if len(fm.Conflicts) != 1 || fm.Conflicts[0].Name != "legacy-release" {
		t.Errorf("conflicts = %+v", fm.Conflicts)
	}
	if len(fm.Summaries) != 1 || !strings.HasPrefix(fm.Summaries[0], "Use when") {
		t.Errorf("summaries = %v", fm.Summaries)
	}
}

func TestParseSkillFrontmatterErrorsUseMarkdownLines(t *testing.T) {
	// Frontmatter starts on line 2 of the markdown file (after "---").
	cases := []struct {
		src  string
		line int
		text string
	}{
		{"name: ok\ndescription: fine\ntags: {a: 1}\n", 4, "tags"},
		{"name: ok\nrequires:\n  - 42\n", 4, "requires.0"},
		{"name: ok\n\tdescription: tab\n", 3, "tab"},
		{"name: \"\"\n", 2, "name"},
	}
	for _, c := range cases {
		_, ds := ParseSkillFrontmatter("SKILLS/cat/x/SKILL.md", []byte(c.src), 1)
		if len(ds) == 0 {
			t.Errorf("%q: no diagnostics", c.src)
			continue
		}
		d := ds[0]
		if d.File != "SKILLS/cat/x/SKILL.md" || d.Line != c.line || !strings.Contains(d.Message, c.text) {
			t.Errorf("%q: got %s, want line %d mentioning %q", c.src, d, c.line, c.text)
		}
	}
}

// TestSkillFastPathKnowsEveryTypedKey reads the keys #SkillFrontmatter
// types, at the top level and in metadata, and checks that the fast
// reader checks the shape of exactly those: a key added to
// schema/skill.cue without teaching the fast reader fails here instead of
// letting a wrong shape through.
func TestSkillFastPathKnowsEveryTypedKey(t *testing.T) {
	ev, err := loadEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	def := ev.schema.LookupPath(cue.MakePath(cue.Def(schema.SkillFrontmatter)))
	labels := func(v cue.Value) []string {
		it, err := v.Fields(cue.Optional(true))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for it.Next() {
			out = append(out, it.Selector().Unquoted())
		}
		slices.Sort(out)
		return out
	}
	if got, want := slices.Sorted(maps.Keys(skillShapes)), labels(def); !slices.Equal(got, want) {
		t.Errorf("fast path checks %v; the schema types %v", got, want)
	}
	meta := def.LookupPath(cue.MakePath(cue.Str("metadata").Optional()))
	if got, want := slices.Sorted(maps.Keys(metadataShapes)), labels(meta); !slices.Equal(got, want) {
		t.Errorf("fast path checks metadata %v; the schema types %v", got, want)
	}
}

// TestStarterLibraryFastPathEqualsCUE reads every skill of the embedded
// starter library both ways: the fast reader must accept each one (or it
// would not be worth keeping) and read it exactly as CUE does.
func TestStarterLibraryFastPathEqualsCUE(t *testing.T) {
	n := 0
	err := fs.WalkDir(starter.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		src, err := fs.ReadFile(starter.FS, p)
		if err != nil {
			return err
		}
		yamlSrc, _, _, ok, closed := SplitSkillDocument(src)
		if !ok || !closed {
			return nil
		}
		n++
		if _, fast := parseSkillFast(p, yamlSrc, 1); !fast {
			t.Errorf("%s: the fast reader declines a starter skill", p)
		}
		if _, ds := parseSkillCUE(p, yamlSrc, 1); ds != nil {
			t.Errorf("%s: %v", p, ds)
		}
		checkSkillAgreement(t, string(yamlSrc))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 52 {
		t.Errorf("read %d starter skills, want the whole library (52)", n)
	}
}
