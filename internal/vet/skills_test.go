package vet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/skills"
	"github.com/evokore/evokore/internal/testutil"
)

func TestSkillsReportsEveryProblemWithItsLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "SKILLS")
	testutil.WriteFile(t, dir, "ops/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy.\nversion: 2.0.0\nrequires:\n  - build@>=2.0.0\n  - nowhere\nconflicts: [legacy]\n---\nbody\n")
	testutil.WriteFile(t, dir, "ops/build/SKILL.md", "---\nname: build\ndescription: Build.\nversion: 1.0.0\n---\nbody\n")
	testutil.WriteFile(t, dir, "ops/legacy/SKILL.md", "---\nname: legacy\ndescription: Old.\n---\nbody\n")
	testutil.WriteFile(t, dir, "ops/broken/SKILL.md", "---\nname: broken\ndescription: x\naliases: {a: b}\n---\nbody\n")
	testutil.WriteFile(t, dir, "ops/ok.md", "---\nname: fine\ndescription: Fine.\n---\nbody\n")

	ds := Skills(dir, false)
	want := []string{
		filepath.Join(dir, "ops/broken/SKILL.md") + ":4:10: error: aliases: ",
		filepath.Join(dir, "ops/deploy/SKILL.md") + `:6:5: error: build version 1.0.0 does not satisfy ">=2.0.0"`,
		filepath.Join(dir, "ops/deploy/SKILL.md") + ":7:5: error: Missing required skill: nowhere [" + skills.CodeMissingDep + "]",
		filepath.Join(dir, "ops/deploy/SKILL.md") + ":8:13: error: Conflicts with installed skill: legacy [" + skills.CodeConflict + "]",
	}
	if len(ds) != len(want) {
		t.Fatalf("diagnostics:\n%s", ds.Error())
	}
	for i, w := range want {
		if !strings.HasPrefix(ds[i].String(), w) && !strings.Contains(ds[i].String(), w) {
			t.Errorf("diagnostic %d = %s\nwant %s", i, ds[i], w)
		}
	}
	if !ds.HasErrors() {
		t.Error("problems must fail vet")
	}
}

func TestSkillsCleanLibraryAndStrict(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "SKILLS")
	testutil.WriteFile(t, dir, "a/one/SKILL.md", "---\nname: one\ndescription: One.\nversion: banana\n---\nbody\n")
	ds := Skills(dir, false)
	if len(ds) != 1 || ds[0].Severity != config.SeverityWarning || ds.HasErrors() {
		t.Fatalf("%v", ds)
	}
	if ds := Skills(dir, true); !ds.HasErrors() {
		t.Fatalf("strict: %v", ds)
	}
	if err := os.Remove(filepath.Join(dir, "a/one/SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if ds := Skills(dir, false); len(ds) != 0 {
		t.Fatalf("empty library: %v", ds)
	}
	if ds := Skills(filepath.Join(dir, "missing"), false); len(ds) != 1 || ds[0].Code != CodeSkillsDir {
		t.Fatalf("missing dir: %v", ds)
	}
}

// The starter library in the repository must vet clean.
func TestStarterLibraryVetsClean(t *testing.T) {
	if ds := Skills(filepath.Join(testutil.Root(t), "SKILLS"), true); len(ds) != 0 {
		t.Fatalf("SKILLS has problems:\n%s", ds.Error())
	}
}
