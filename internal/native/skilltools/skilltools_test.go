package skilltools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/skills"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// library writes a skills directory (path → content) and returns it.
func library(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "SKILLS")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		testutil.WriteFile(t, dir, p, content)
	}
	return dir
}

func doc(name, desc string, extra ...string) string {
	b, _ := json.Marshal(desc)
	fm := "---\nname: " + name + "\ndescription: " + string(b) + "\n"
	for _, e := range extra {
		fm += e + "\n"
	}
	return fm + "---\n\n# " + name + "\n\nInstructions of " + name + ".\n"
}

// withSkills starts a router over a skills directory, with extra env.
func withSkills(t *testing.T, dir string, env map[string]string) (*routertest.Harness, *mcp.ClientSession) {
	t.Helper()
	vars := map[string]string{"EVOKORE_SKILLS_DIR": dir}
	for k, v := range env {
		vars[k] = v
	}
	h := routertest.New(t, map[string]any{}, vars)
	return h, h.Connect(nil)
}

func TestResolveWorkflowInjectsSkillsAndRecordsTelemetry(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil) // no skills directory: the starter library
	cs := h.Connect(nil)
	text, isErr := routertest.CallText(t, cs, "resolve_workflow", map[string]any{"objective": "review a pull request"})
	for _, want := range []string{
		"EVOKORE-MCP injected 3 workflow(s) for: review a pull request",
		"--- WORKFLOW: pr-review [code-review] ---",
		"Why matched: name: pr-review",
		`<activated_skill name="pr-review" category="code-review">`,
		"## 1. Understand the intent",
		"</activated_skill>",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if isErr || strings.Count(text, "--- WORKFLOW: ") != 3 {
		t.Errorf("want three workflows, isError=%v", isErr)
	}
	text, _ = routertest.CallText(t, cs, "resolve_workflow", map[string]any{"objective": "qqzx vvwy"})
	if text != "No specific workflows found for 'qqzx vvwy'. Proceed using your general knowledge." {
		t.Errorf("no match: %q", text)
	}

	f, err := os.Open(filepath.Join(h.Dir, "home", skills.TelemetryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []skills.RoutingRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r skills.RoutingRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 2 || recs[0].TopCandidate == nil || *recs[0].TopCandidate != "pr-review" || len(recs[0].Candidates) != 5 || recs[1].TopCandidate != nil {
		t.Fatalf("telemetry: %+v", recs)
	}
}

func TestResolveWorkflowReportsDependencyProblems(t *testing.T) {
	dir := library(t, map[string]string{
		"ops/deploy-app/SKILL.md": doc("deploy-app", "Deploy the application to production.",
			"requires: [build-app@>=2.0.0, missing-skill]", "conflicts: [legacy-deploy]"),
		"ops/build-app/SKILL.md":     doc("build-app", "Build the application.", "version: 1.5.0"),
		"ops/legacy-deploy/SKILL.md": doc("legacy-deploy", "The old deploy script."),
	})
	_, cs := withSkills(t, dir, nil)
	text, _ := routertest.CallText(t, cs, "resolve_workflow", map[string]any{"objective": "deploy the application"})
	for _, want := range []string{
		"Dependency warnings:",
		`- deploy-app: build-app version 1.5.0 does not satisfy ">=2.0.0"`,
		"- deploy-app: Missing required skill: missing-skill",
		"- deploy-app: Conflicts with installed skill: legacy-deploy",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	help, _ := routertest.CallText(t, cs, "get_skill_help", map[string]any{"skill_name": "deploy-app"})
	if !strings.Contains(help, "### Dependency warnings:\n- build-app version 1.5.0") || !strings.Contains(help, "- **Requires:** build-app (>=2.0.0), missing-skill") {
		t.Errorf("help:\n%s", help)
	}
}

func TestSearchSkills(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	text, _ := routertest.CallText(t, cs, "search_skills", map[string]any{"query": "Release"})
	lines := strings.Split(text, "\n")
	if len(lines) < 5 || len(lines) > 15 {
		t.Fatalf("%d lines:\n%s", len(lines), text)
	}
	if !strings.HasPrefix(lines[0], "- **release-tagging** [release]: Tag and publish a release") || !strings.Contains(lines[0], " | matched on name prefix: release-tagging") {
		t.Errorf("first line %q", lines[0])
	}
	text, _ = routertest.CallText(t, cs, "search_skills", map[string]any{"query": "severity levels"})
	if !strings.Contains(text, "- **review-severity-levels** [code-review > pr-review/references]: ") {
		t.Errorf("subcategory shown as [category > sub]:\n%s", text)
	}
	text, isErr := routertest.CallText(t, cs, "search_skills", map[string]any{"query": "qqzx"})
	if text != "No skills found matching that query.\nWhy nothing matched: no indexed word matches 'qqzx'." || isErr {
		t.Errorf("no match: %q %v", text, isErr)
	}
	// A question the library cannot answer abstains and says why.
	text, _ = routertest.CallText(t, cs, "search_skills", map[string]any{"query": "bake sourdough bread"})
	if !strings.HasPrefix(text, "No skills found matching that query.\nWhy nothing matched: ") {
		t.Errorf("no-answer query: %q", text)
	}
	// limit: fewer on request, the default 15 otherwise.
	text, _ = routertest.CallText(t, cs, "search_skills", map[string]any{"query": "release", "limit": 2})
	if n := len(strings.Split(text, "\n")); n != 2 {
		t.Errorf("limit 2 gave %d lines:\n%s", n, text)
	}
	text, _ = routertest.CallText(t, cs, "search_skills", map[string]any{"query": "test"})
	if n := len(strings.Split(text, "\n")); n != 15 {
		t.Errorf("default limit gave %d lines, want 15:\n%s", n, text)
	}
}

func TestGetSkillHelp(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	for _, name := range []string{"release-readiness", "release/release-readiness", "RELEASE-READINESS"} {
		text, _ := routertest.CallText(t, cs, "get_skill_help", map[string]any{"skill_name": name})
		for _, want := range []string{
			"## Skill Overview: release-readiness", "- **Category:** release", "- **Version:** 1.3.0",
			"- **Requires:** changelog-writing (>=1.0.0), semver-versioning (^1.0.0)", "- **Resource:** skill://release/release-readiness",
			"### Internal Instructions:\n# Release readiness",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: missing %q in:\n%s", name, want, text)
			}
		}
		if strings.Contains(text, "Dependency warnings") || strings.Contains(text, "closest match") {
			t.Errorf("%s: the starter skill's dependencies resolve and the name is exact:\n%s", name, text)
		}
	}
	text, _ := routertest.CallText(t, cs, "get_skill_help", map[string]any{"skill_name": "relese readiness"})
	if !strings.HasPrefix(text, "No skill is named 'relese readiness'; showing the closest match, 'release-readiness'.") {
		t.Errorf("fallback: %q", text[:min(len(text), 120)])
	}
	text, isErr := routertest.CallText(t, cs, "get_skill_help", map[string]any{"skill_name": "QQZX"})
	if text != "Could not find a skill named 'qqzx'." || isErr {
		t.Errorf("unknown: %q isError=%v", text, isErr)
	}
}

func TestRefreshSkillsReportsAndNotifies(t *testing.T) {
	dir := library(t, map[string]string{
		"cat/one/SKILL.md": doc("one", "First."),
		"cat/two/SKILL.md": doc("two", "Second."),
	})
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_SKILLS_DIR": dir})
	var changed atomic.Int32
	cs := h.Connect(&mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed.Add(1) }})
	if _, err := cs.ListResources(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, dir, "cat/three/SKILL.md", doc("three", "Third."))
	testutil.WriteFile(t, dir, "cat/broken/SKILL.md", "---\nname: broken\ntags: {a: 1}\n---\n")
	if err := os.RemoveAll(filepath.Join(dir, "cat", "one")); err != nil {
		t.Fatal(err)
	}
	text, isErr := routertest.CallText(t, cs, "refresh_skills", map[string]any{})
	first, rest, _ := strings.Cut(text, "\n")
	if isErr || !strings.HasPrefix(first, "Skills refreshed in ") || !strings.HasSuffix(first, "ms: 1 added, 1 removed, 1 unchanged/updated, 2 total skills indexed.") {
		t.Errorf("first line %q", first)
	}
	if !strings.Contains(rest, "1 problem(s) found while indexing") || !strings.Contains(rest, filepath.Join("cat", "broken", "SKILL.md")+":3:7: error: tags: ") {
		t.Errorf("problems:\n%s", rest)
	}
	routertest.WaitFor(t, "resources/list_changed", func() bool { return changed.Load() > 0 })
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	got := strings.Join(uris, " ")
	if !strings.Contains(got, "skill://cat/three") || strings.Contains(got, "skill://cat/one") {
		t.Errorf("resources after refresh: %v", uris)
	}
}

func TestWatcherPublishesNewSkills(t *testing.T) {
	dir := library(t, map[string]string{"cat/one/SKILL.md": doc("one", "First.")})
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_SKILLS_DIR": dir, "EVOKORE_SKILL_WATCHER": "true"})
	var changed atomic.Int32
	cs := h.Connect(&mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed.Add(1) }})
	testutil.WriteFile(t, dir, "fresh/new-one/SKILL.md", doc("new-one", "Arrived while serving."))
	routertest.WaitFor(t, "the watcher to index the new skill", func() bool {
		text, _ := routertest.CallText(t, cs, "search_skills", map[string]any{"query": "new-one"})
		return strings.HasPrefix(text, "- **new-one**")
	})
	routertest.WaitFor(t, "resources/list_changed", func() bool { return changed.Load() > 0 })
	if !strings.Contains(h.Stderr.String(), "[EVOKORE] Skill watcher started dir="+dir+" ") {
		t.Errorf("stderr:\n%s", h.Stderr.String())
	}
}

// search_skills with explain: true adds each match's signals; without it
// the lines are as before.
func TestSearchSkillsExplain(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	text, _ := routertest.CallText(t, cs, "search_skills", map[string]any{"query": "severity levels", "explain": true})
	if !strings.Contains(text, "\n  why: tier relevance: lexical ") || !strings.Contains(text, ", meaning ") {
		t.Errorf("explain:\n%s", text)
	}
	if text, _ := routertest.CallText(t, cs, "search_skills", map[string]any{"query": "severity levels"}); strings.Contains(text, "why:") {
		t.Errorf("without explain:\n%s", text)
	}
}
