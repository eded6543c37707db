package skilltools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/skills"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

func TestSkillCreatorWritesIntoTheLibrary(t *testing.T) {
	dir := library(t, map[string]string{"cat/existing/SKILL.md": doc("existing", "Here already.")})
	_, cs := withSkills(t, dir, admin)
	text, isErr := routertest.CallText(t, cs, "skill_creator", map[string]any{"skill_name": "api-smoke-test", "target_dir": "testing", "description": "Smoke-test an API: call each endpoint once."})
	file := filepath.Join(dir, "testing", "api-smoke-test", "SKILL.md")
	if isErr || text != "Created skill 'api-smoke-test' at "+file+". Index refreshed: it is indexed as skill://testing/api-smoke-test (2 skills in all)." {
		t.Fatalf("%v %q", isErr, text)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fm, ds, ok := skills.ParseDocument(file, b)
	if !ok || ds != nil || fm.Name != "api-smoke-test" || fm.Description != "Smoke-test an API: call each endpoint once." || fm.Version != "0.1.0" {
		t.Fatalf("scaffold does not validate: %v %v\n%s", ds, fm, b)
	}
	help, _ := routertest.CallText(t, cs, "get_skill_help", map[string]any{"skill_name": "api-smoke-test"})
	if !strings.Contains(help, "## Skill Overview: api-smoke-test") {
		t.Errorf("not indexed: %q", help)
	}

	before := snapshotTree(t, filepath.Dir(dir))
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"skill_name": "api-smoke-test", "target_dir": "testing", "description": "again"}, "A skill already exists at " + file},
		{map[string]any{"skill_name": "../escape", "target_dir": "testing", "description": "x"}, "path traversal"},
		{map[string]any{"skill_name": "ok", "target_dir": "../../outside", "description": "x"}, "is outside the skills directory"},
		{map[string]any{"skill_name": "ok", "target_dir": filepath.Dir(dir), "description": "x"}, "is outside the skills directory"},
		{map[string]any{"skill_name": "ok", "target_dir": "  ", "description": "x"}, "target_dir is empty."},
	} {
		text, isErr := routertest.CallText(t, cs, "skill_creator", c.args)
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("%v: isError=%v %q", c.args, isErr, text)
		}
	}
	if after := snapshotTree(t, filepath.Dir(dir)); after != before {
		t.Errorf("refused calls changed files:\n%s\n%s", before, after)
	}
}

func TestSkillCreatorReportsFailureHonestly(t *testing.T) {
	// No filesystem server and no skills directory: nothing can be
	// written, and the tool says so.
	h := routertest.New(t, map[string]any{}, admin)
	text, isErr := routertest.CallText(t, h.Connect(nil), "skill_creator", map[string]any{"skill_name": "x", "target_dir": "cat", "description": "x"})
	if !isErr || !strings.Contains(text, "no filesystem server named 'fs' is configured") {
		t.Errorf("%v %q", isErr, text)
	}

	// A filesystem server is configured but cannot start: the write fails
	// and the tool reports it instead of claiming success.
	h = routertest.New(t, map[string]any{"fs": map[string]any{"command": filepath.Join(t.TempDir(), "no-such-binary")}}, admin)
	cs := h.Connect(nil)
	h.Booted()
	text, isErr = routertest.CallText(t, cs, "skill_creator", map[string]any{"skill_name": "x", "target_dir": t.TempDir(), "description": "x"})
	if !isErr || !strings.Contains(text, "Failed to create the skill 'x' through the filesystem server: fs_create_directory failed: ") || !strings.Contains(text, "Nothing was written.") {
		t.Errorf("%v %q", isErr, text)
	}
}

func TestSkillCreatorThroughTheFilesystemServer(t *testing.T) {
	script := testutil.NPMServer(t, "server-filesystem")
	allowed := t.TempDir()
	// Resolve symlinks (macOS /tmp): the server compares real paths.
	allowed, _ = filepath.EvalSymlinks(allowed)
	h := routertest.New(t, map[string]any{"fs": map[string]any{"command": "node", "args": []any{script, allowed}}}, admin)
	cs := h.Connect(nil)
	h.Booted()
	text, isErr := routertest.CallText(t, cs, "skill_creator", map[string]any{"skill_name": "via-fs", "target_dir": allowed, "description": "Written by the filesystem child."})
	file := filepath.Join(allowed, "via-fs", "SKILL.md")
	if isErr || !strings.HasPrefix(text, "Created skill 'via-fs' at "+file+" through the filesystem server (fs_write_file).") {
		t.Fatalf("%v %q", isErr, text)
	}
	if !strings.Contains(text, "It is not in the skills directory") {
		t.Errorf("should say the file is outside the library: %q", text)
	}
	b, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(b), `description: "Written by the filesystem child."`) {
		t.Fatalf("%v\n%s", err, b)
	}

	// Outside the server's allowed directories the child refuses, and the
	// tool passes the refusal on instead of reporting success.
	outside := t.TempDir()
	text, isErr = routertest.CallText(t, cs, "skill_creator", map[string]any{"skill_name": "nope", "target_dir": outside, "description": "x"})
	if !isErr || !strings.Contains(text, "through the filesystem server") || !strings.Contains(text, "returned an error") {
		t.Errorf("%v %q", isErr, text)
	}
	if _, err := os.Stat(filepath.Join(outside, "nope")); !os.IsNotExist(err) {
		t.Errorf("the refused directory exists: %v", err)
	}

	// Without a role, the shipped rules make fs_write_file wait for a
	// human: the skill is not written, and the tool says so.
	h = routertest.New(t, map[string]any{"fs": map[string]any{"command": "node", "args": []any{script, allowed}}}, nil)
	cs = h.Connect(nil)
	h.Booted()
	text, isErr = routertest.CallText(t, cs, "skill_creator", map[string]any{"skill_name": "needs-approval", "target_dir": allowed, "description": "x"})
	if !isErr || !strings.Contains(text, "Failed to write "+filepath.Join(allowed, "needs-approval", "SKILL.md")+" through the filesystem server: fs_write_file returned an error: ") ||
		!strings.Contains(text, "The skill was not created") {
		t.Errorf("%v %q", isErr, text)
	}
	if _, err := os.Stat(filepath.Join(allowed, "needs-approval", "SKILL.md")); !os.IsNotExist(err) {
		t.Errorf("written without approval: %v", err)
	}
}

func TestDocsArchitect(t *testing.T) {
	project := t.TempDir()
	testutil.WriteFile(t, project, "package.json", `{"name": "demo-app", "version": "2.1.0"}`)
	testutil.WriteFile(t, project, "go.mod", "module example.com/demo\n\ngo 1.26\n")

	// Without a filesystem server the manifests are read from disk.
	h := routertest.New(t, map[string]any{}, nil)
	text, isErr := routertest.CallText(t, h.Connect(nil), "docs_architect", map[string]any{"target_dir": project})
	for _, want := range []string{
		"You are the documentation architect for the project at " + project,
		"### package.json\n```\n{\"name\": \"demo-app\", \"version\": \"2.1.0\"}\n```",
		"### go.mod\n```\nmodule example.com/demo",
		"Not read:\n- pyproject.toml: not found\n- Cargo.toml: not found",
		"### Procedure (skill skill://documentation/docs-architect)\n# Documentation architect",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if isErr {
		t.Error("isError")
	}
}

func TestDocsArchitectThroughTheFilesystemServer(t *testing.T) {
	script := testutil.NPMServer(t, "server-filesystem")
	project, _ := filepath.EvalSymlinks(t.TempDir())
	testutil.WriteFile(t, project, "package.json", `{"name": "fs-demo"}`)
	h := routertest.New(t, map[string]any{"fs": map[string]any{"command": "node", "args": []any{script, project}}}, admin)
	cs := h.Connect(nil)
	h.Booted()
	text, isErr := routertest.CallText(t, cs, "docs_architect", map[string]any{"target_dir": project})
	if isErr || !strings.Contains(text, "### package.json\n```\n{\"name\": \"fs-demo\"}\n```") || !strings.Contains(text, "- go.mod: fs_read_text_file returned an error") {
		t.Errorf("%v\n%s", isErr, text)
	}
	// A directory the server may not read: nothing is embedded as if it
	// were project content.
	other, _ := filepath.EvalSymlinks(t.TempDir())
	testutil.WriteFile(t, other, "package.json", `{"name": "secret-project"}`)
	text, _ = routertest.CallText(t, cs, "docs_architect", map[string]any{"target_dir": other})
	if strings.Contains(text, "secret-project") || !strings.Contains(text, "No project manifest could be read through the filesystem server (fs_read_text_file)") {
		t.Errorf("outside the allowed directories:\n%s", text)
	}
}

// With the default relative ./SKILLS, what skill_creator writes is indexed,
// and an absolute target_dir inside the library is accepted.
func TestSkillCreatorWithARelativeSkillsDir(t *testing.T) {
	dir := library(t, map[string]string{"cat/existing/SKILL.md": doc("existing", "Here already.")})
	t.Chdir(filepath.Dir(dir))
	_, cs := withSkills(t, "./SKILLS", admin)
	for _, c := range []struct{ name, target string }{
		{"relative-one", "testing"},
		{"absolute-one", filepath.Join(dir, "testing")},
	} {
		text, isErr := routertest.CallText(t, cs, "skill_creator", map[string]any{"skill_name": c.name, "target_dir": c.target, "description": "A probe skill."})
		if isErr || !strings.Contains(text, "it is indexed as skill://testing/"+c.name) {
			t.Errorf("%s in %s: %v %q", c.name, c.target, isErr, text)
		}
	}
}
