package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// listResources is resources/list by URI.
func listResources(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Resource {
	t.Helper()
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	out := map[string]*mcp.Resource{}
	for _, r := range res.Resources {
		out[r.URI] = r
	}
	return out
}

// readDir is resources/directory/read of uri: its children as
// "name mimeType size" by URI.
func readDir(cs *mcp.ClientSession, uri string) (map[string]string, *extDirResult, error) {
	res, err := mcp.CallCustomMethod[*extDirParams, *extDirResult](context.Background(), cs, "resources/directory/read", &extDirParams{URI: uri})
	if err != nil {
		return nil, nil, err
	}
	out := map[string]string{}
	for _, r := range res.Resources {
		out[r.URI] = fmt.Sprintf("%s %s %d", r.Name, r.MIMEType, r.Size)
	}
	return out, res, nil
}

// A client that knows only resources finds every skill the extension
// serves in resources/list, at its SKILL.md, named and described by its
// frontmatter, the library's and a child's, beside the older skill://
// resources; with directoryRead declared, resources/directory/read lists
// a skill's directories (files with their sizes, subdirectories as
// inode/directory) and refuses what is no directory: in both eras.
func TestSkillsAreListedAsResourcesAndTheirDirectoriesRead(t *testing.T) {
	h, _ := skillRouter(t, nil, "")
	url := serveHTTP(t, h, "")
	const local, child, guide = "skill://dev/code-check/SKILL.md", "skill://kids/git-flow/SKILL.md", "skill://dev/code-check/references/guide.md"
	for i, version := range []string{"2025-11-25", "2026-07-28"} {
		cs := extClient(t, url, version)
		if i == 0 {
			h.Booted()
			routertest.WaitFor(t, "the child's skills to be listed", func() bool {
				_, ok := listResources(t, cs)[child]
				return ok
			})
		}
		ext, _ := cs.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/skills"].(map[string]any)
		if version == "2025-11-25" && ext["directoryRead"] != true {
			t.Errorf("the extension is declared as %v; want directoryRead: true", ext)
		}
		all := listResources(t, cs)
		want := map[string]string{
			local: fmt.Sprintf("code-check|Check a change before review.|text/markdown|%d", len(localSkill)),
			child: fmt.Sprintf("git-flow|Branch and commit the team's way.|text/markdown|%d", len(childSkill)),
		}
		for uri, w := range want {
			r := all[uri]
			if r == nil {
				t.Errorf("%s: resources/list has no %s", version, uri)
				continue
			}
			if got := fmt.Sprintf("%s|%s|%s|%d", r.Name, r.Description, r.MIMEType, r.Size); got != w {
				t.Errorf("%s: %s is listed as %s; want %s", version, uri, got, w)
			}
		}
		if r := all["skill://dev/code-check"]; r == nil || r.Name != "Skill: code-check" {
			t.Errorf("%s: the older resource of the skill is not listed as before: %+v", version, r)
		}
		if _, listed := all[guide]; listed {
			t.Errorf("%s: a skill's other files are listed too", version)
		}
		if body, err := readSkillText(t, cs, "skill://dev/code-check"); err != nil || !strings.HasPrefix(body, "# Code check") {
			t.Errorf("%s: the older resource reads %q, %v", version, body, err)
		}

		for dir, w := range map[string]map[string]string{
			"skill://dev/code-check": {
				local:                               fmt.Sprintf("SKILL.md text/markdown %d", len(localSkill)),
				"skill://dev/code-check/references": "references inode/directory 0",
			},
			"skill://dev/code-check/references": {guide: fmt.Sprintf("guide.md text/markdown %d", len(localGuide))},
			"skill://dev":                       {"skill://dev/code-check": "code-check inode/directory 0"},
			"skill://kids": {
				"skill://kids/git-flow":     "git-flow inode/directory 0",
				"skill://kids/deploy-notes": "deploy-notes inode/directory 0",
			},
			"skill://kids/git-flow": {child: fmt.Sprintf("SKILL.md text/markdown %d", len(childSkill))},
		} {
			got, res, err := readDir(cs, dir)
			if err != nil || fmt.Sprint(got) != fmt.Sprint(w) {
				t.Errorf("%s: resources/directory/read %s = %v, %v; want %v", version, dir, got, err, w)
				continue
			}
			if wantType := map[bool]string{true: "complete"}[version == "2026-07-28"]; res.ResultType != wantType || res.NextCursor != "" {
				t.Errorf("%s: resources/directory/read %s: resultType %q, nextCursor %q", version, dir, res.ResultType, res.NextCursor)
			}
		}
		for _, notDir := range []string{local, guide, "skill://dev/nothing", "skill://dev/code-check/", "skill://", "evokore://server"} {
			if got, _, err := readDir(cs, notDir); err == nil || !strings.Contains(err.Error(), "-32602") && !strings.Contains(err.Error(), "not a directory") {
				t.Errorf("%s: resources/directory/read %s = %v, %v; want -32602", version, notDir, got, err)
			}
		}
	}
}

// A readonly session is shown in resources/list none of the resources of
// a skill its profile leaves out or its role denies, neither the older
// URI nor the extension's SKILL.md, and cannot read them nor list their
// directories, in both eras; a session without a role still sees the
// skill its role does not deny.
func TestExcludedSkillsAreNeitherListedNorReadAsResources(t *testing.T) {
	const lint = "---\nname: lint-notes\ndescription: Note what the linter found.\n---\n# Lint notes\n"
	extra := map[string]any{"discovery": map[string]any{
		"activeProfile": "narrow",
		"profiles":      map[string]any{"narrow": map[string]any{"alwaysVisible": "all-native", "skills": []string{"code-check", "kids_deploy-notes"}}},
	}}
	perms := "roles:\n  readonly:\n    default_permission: deny\n    skills:\n      kids_deploy-notes: deny\n"
	h, _ := skillRouterWith(t, map[string]string{"dev/lint-notes/SKILL.md": lint}, extra, perms)
	readonly, admin := serveHTTP(t, h, "readonly"), serveHTTP(t, h, "")
	const deploy = "skill://kids/deploy-notes/SKILL.md"
	hidden := []string{
		"skill://dev/lint-notes", "skill://dev/lint-notes/SKILL.md", // left out by the profile: the library's
		"skill://kids/git-flow/SKILL.md", // and a child's
		deploy,                           // denied by the role
	}
	for i, version := range []string{"2025-11-25", "2026-07-28"} {
		cs, boss := extClient(t, readonly, version), extClient(t, admin, version)
		if i == 0 {
			h.Booted()
			routertest.WaitFor(t, "the child's skills to be listed", func() bool {
				_, ok := listResources(t, boss)[deploy]
				return ok
			})
		}
		all := listResources(t, cs)
		for _, uri := range []string{"skill://dev/code-check", "skill://dev/code-check/SKILL.md"} {
			if all[uri] == nil {
				t.Errorf("%s: readonly is not shown %s", version, uri)
			}
		}
		for _, uri := range hidden {
			if all[uri] != nil {
				t.Errorf("%s: readonly is shown %s", version, uri)
			}
			if text, err := readSkillText(t, cs, uri); err == nil {
				t.Errorf("%s: readonly reads %s: %q", version, uri, text)
			}
		}
		for _, dir := range []string{"skill://dev/lint-notes", "skill://kids/git-flow", "skill://kids/deploy-notes"} {
			if got, _, err := readDir(cs, dir); err == nil {
				t.Errorf("%s: readonly lists the directory %s: %v", version, dir, got)
			}
		}
		if got, _, err := readDir(cs, "skill://dev"); err != nil || len(got) != 1 {
			t.Errorf("%s: readonly's skill://dev = %v, %v; want code-check alone", version, got, err)
		}
		if bossAll := listResources(t, boss); bossAll[deploy] == nil || bossAll["skill://dev/lint-notes"] != nil {
			t.Errorf("%s: without a role, the skills shown are not the profile's", version)
		}
	}
}

// A directory of more children than a page holds is read a page at a
// time, every child once, and a cursor the router did not give is -32602.
func TestSkillDirectoriesArePaged(t *testing.T) {
	lib := map[string]string{"dev/many/SKILL.md": "---\nname: many\ndescription: Many templates.\n---\n# Many\n"}
	for i := range 120 {
		lib[fmt.Sprintf("dev/many/templates/t%03d.md", i)] = fmt.Sprintf("template %d\n", i)
	}
	h, _ := skillRouterWith(t, lib, nil, "")
	cs := extClient(t, serveHTTP(t, h, ""), "2025-11-25")
	h.Booted()
	const dir = "skill://dev/many/templates"
	seen := map[string]bool{}
	var sizes []int
	p := &extDirParams{URI: dir}
	for range 10 {
		res, err := mcp.CallCustomMethod[*extDirParams, *extDirResult](context.Background(), cs, "resources/directory/read", p)
		if err != nil {
			t.Fatalf("resources/directory/read %s: %v", dir, err)
		}
		sizes = append(sizes, len(res.Resources))
		for _, r := range res.Resources {
			if seen[r.URI] {
				t.Errorf("%s is listed twice", r.URI)
			}
			seen[r.URI] = true
		}
		if res.NextCursor == "" {
			break
		}
		p = &extDirParams{URI: dir, Cursor: res.NextCursor}
	}
	if fmt.Sprint(sizes) != "[100 20]" || len(seen) != 120 || !seen[dir+"/t000.md"] || !seen[dir+"/t119.md"] {
		t.Errorf("pages of %v, %d children", sizes, len(seen))
	}
	if _, err := mcp.CallCustomMethod[*extDirParams, *extDirResult](context.Background(), cs, "resources/directory/read", &extDirParams{URI: dir, Cursor: "not-a-cursor"}); err == nil || !strings.Contains(err.Error(), "-32602") && !strings.Contains(err.Error(), "Invalid cursor") {
		t.Errorf("a forged cursor: %v", err)
	}
}
