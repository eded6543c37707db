package skills

import (
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
)

func TestDependenciesResolveExactlyWithSemver(t *testing.T) {
	ix := buildDir(t, writeTree(t, map[string]string{
		"core/core-utils/SKILL.md":  skillDoc("core-utils", "Core.", "version: 1.4.0"),
		"core/beta/SKILL.md":        skillDoc("beta", "A prerelease.", "version: 2.0.0-beta.1"),
		"core/noversion/SKILL.md":   skillDoc("noversion", "No version."),
		"core/code-review/SKILL.md": skillDoc("code-review", "Review.", "version: 1.0.0"),
		"app/ok/SKILL.md": skillDoc("ok", "All satisfied.",
			"requires:", "  - core-utils@>=1.0.0", "  - core-utils@^1.2", "  - {name: core-utils, minVersion: 1.4.0}",
			"  - core/code-review", "  - beta@>=2.0.0-0", "  - noversion"),
		"app/bad/SKILL.md": skillDoc("bad", "Nothing satisfied.",
			"requires:",
			"  - core-utils@>=2.0.0", // line 5
			"  - {name: core-utils, minVersion: 1.5}", // line 6
			"  - code-reviw",        // line 7: a near miss is still missing
			"  - beta@>=1.0.0",      // line 8: prereleases need a prerelease constraint
			"  - noversion@>=1.0.0", // line 9
			"  - bad",               // line 10
			"conflicts: [code-review, not-installed]"), // line 11
	}))
	if p := ix.Problems(ix.ByName("ok")); len(p) != 0 {
		t.Fatalf("ok has problems: %v", p)
	}
	got := ix.Problems(ix.ByName("bad"))
	want := []struct {
		line int
		code string
		text string
	}{
		{5, CodeDepVersion, `core-utils version 1.4.0 does not satisfy ">=2.0.0"`},
		{6, CodeDepVersion, `does not satisfy ">= 1.5"`},
		{7, CodeMissingDep, "Missing required skill: code-reviw"},
		{8, CodeDepVersion, "beta version 2.0.0-beta.1 does not satisfy"},
		{9, CodeDepVersion, "Required skill noversion has no version"},
		{10, CodeMissingDep, "bad requires itself"},
		{11, CodeConflict, "Conflicts with installed skill: code-review"},
	}
	if len(got) != len(want) {
		t.Fatalf("problems:\n%v", got)
	}
	for i, w := range want {
		d := got[i]
		if d.Line != w.line || d.Code != w.code || !strings.Contains(d.Message, w.text) || d.File != "SKILLS/app/bad/SKILL.md" {
			t.Errorf("problem %d = %s; want line %d %s containing %q", i, d, w.line, w.code, w.text)
		}
	}
	ws := ix.Warnings(ix.ByName("bad"))
	if len(ws) != len(want) || ws[2] != "Missing required skill: code-reviw" {
		t.Errorf("warnings %q", ws)
	}
}

func TestAllProblemsFindsCycles(t *testing.T) {
	ix := buildDir(t, writeTree(t, map[string]string{
		"c/a/SKILL.md": skillDoc("a", "A.", "requires: [b]"),
		"c/b/SKILL.md": skillDoc("b", "B.", "requires: [c]"),
		"c/c/SKILL.md": skillDoc("c", "C.", "requires: [a]"),
		"c/d/SKILL.md": skillDoc("d", "D.", "requires: [a]"),
	}))
	var cycles []config.Diagnostic
	for _, d := range ix.AllProblems() {
		if d.Code == CodeCycle {
			cycles = append(cycles, d)
		}
	}
	if len(cycles) != 1 || cycles[0].Message != "requires cycle: a → b → c → a" || cycles[0].Severity != config.SeverityWarning {
		t.Fatalf("cycles: %v", cycles)
	}
}
