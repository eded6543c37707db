package skilltools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/skills"
)

// fsServer is the id of the filesystem child that skill_creator and
// docs_architect go through when it is configured.
const fsServer = "fs"

// fsConfigured reports whether a filesystem child named fs is configured
// and enabled.
func (t *Tools) fsConfigured() bool {
	if t.host.Config == nil {
		return false
	}
	s, ok := t.host.Config().Server(fsServer)
	return ok && !s.Disabled
}

// callFS runs a tool of the fs child through the router's pipeline, as
// the calling session, and returns its text or why there is none.
func (t *Tools) callFS(ctx context.Context, call *native.Call, tool string, args map[string]any) (string, error) {
	if t.host.Call == nil {
		return "", fmt.Errorf("the router cannot call other tools here")
	}
	res, err := t.host.Call(ctx, call.Session, tool, args)
	if err != nil {
		return "", fmt.Errorf("%s failed: %v", tool, err)
	}
	text := resultText(res)
	if res.IsError {
		return "", fmt.Errorf("%s returned an error: %s", tool, text)
	}
	return text, nil
}

func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// skillTemplate is the scaffold skill_creator writes.
func skillTemplate(name, description string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return fmt.Sprintf(`---
name: %s
description: %s
version: 0.1.0
tags: []
---

# %s

%s

## When to use

- Describe the situations this skill is for.

## Steps

1. First step.
2. Second step.

## Done when

- State what a finished result looks like.
`, q(name), q(description), name, description)
}

func (t *Tools) skillCreator(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Name        string `json:"skill_name"`
		TargetDir   string `json:"target_dir"`
		Description string `json:"description"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	name, err := sanitizeSegment("skill name", in.Name)
	if err != nil {
		return native.Errorf("Refusing to create the skill: %v.", err), nil
	}
	content := skillTemplate(name, strings.TrimSpace(in.Description))
	if _, ds, _ := skills.ParseDocument("SKILL.md", []byte(content)); ds != nil {
		return native.Errorf("The scaffold for '%s' would not validate:\n%s", name, ds.Error()), nil
	}
	targetDir := strings.TrimSpace(in.TargetDir)
	if targetDir == "" {
		return native.Errorf("target_dir is empty."), nil
	}

	if t.fsConfigured() {
		dir := filepath.Join(targetDir, name)
		file := filepath.Join(dir, skills.SkillFile)
		if _, err := t.callFS(ctx, call, fsServer+"_create_directory", map[string]any{"path": dir}); err != nil {
			return native.Errorf("Failed to create the skill '%s' through the filesystem server: %v. Nothing was written.", name, err), nil
		}
		if _, err := t.callFS(ctx, call, fsServer+"_write_file", map[string]any{"path": file, "content": content}); err != nil {
			return native.Errorf("Failed to write %s through the filesystem server: %v. The skill was not created (its directory %s may exist now, empty).", file, err, dir), nil
		}
		return native.Text("Created skill '%s' at %s through the filesystem server (%s_write_file).%s",
			name, file, fsServer, t.refreshIfInLibrary(file)), nil
	}

	root, err := t.writableRoot()
	if err != nil {
		return native.Errorf("Cannot create the skill: no filesystem server named '%s' is configured, and %v.", fsServer, err), nil
	}
	dir := targetDir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	file := filepath.Join(dir, name, skills.SkillFile)
	if !inside(root, file) {
		return native.Errorf("Refusing to create the skill: %s is outside the skills directory %s. Without a filesystem server named '%s', skill_creator only writes inside the skills directory (use a target_dir relative to it, such as a category name).", file, root, fsServer), nil
	}
	if _, err := os.Lstat(file); err == nil {
		return native.Errorf("A skill already exists at %s; skill_creator does not overwrite skills.", file), nil
	}
	if err := writeFile(file, []byte(content)); err != nil {
		return native.Errorf("Failed to write %s: %v. The skill was not created.", file, err), nil
	}
	return native.Text("Created skill '%s' at %s.%s", name, file, t.refreshIfInLibrary(file)), nil
}

// writableRoot is the skills directory made absolute: with the default
// relative ./SKILLS, an absolute target_dir inside it and the index's
// paths must compare against the same absolute folder.
func (t *Tools) writableRoot() (string, error) {
	root, err := t.lib.Writable()
	if err != nil {
		return "", err
	}
	if abs, aerr := filepath.Abs(root); aerr == nil {
		root = abs
	}
	return root, nil
}

// refreshIfInLibrary re-indexes when file is in the skills directory and
// says what happened.
func (t *Tools) refreshIfInLibrary(file string) string {
	root, err := t.writableRoot()
	abs, aerr := filepath.Abs(file)
	if err != nil || aerr != nil || !inside(root, abs) {
		return fmt.Sprintf(" It is not in the skills directory %s, so it is not indexed.", t.lib.Dir())
	}
	r := t.lib.Refresh()
	for _, s := range r.Index.Skills {
		if p, err := filepath.Abs(filepath.Join(root, filepath.FromSlash(s.Path))); err == nil && p == abs {
			return fmt.Sprintf(" Index refreshed: it is indexed as %s (%d skills in all).", s.URI, r.Total)
		}
	}
	return fmt.Sprintf(" Index refreshed, but the new file is not indexed (%d skills in all): check its place in the layout (category/<name>/SKILL.md).", r.Total)
}

// manifests are the project files docs_architect reads, in order.
var manifests = []string{"package.json", "go.mod", "pyproject.toml", "Cargo.toml"}

// maxManifest bounds what docs_architect embeds of one manifest.
const maxManifest = 64 << 10

func (t *Tools) docsArchitect(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		TargetDir string `json:"target_dir"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	dir := strings.TrimSpace(in.TargetDir)
	if dir == "" {
		return native.Errorf("target_dir is empty."), nil
	}
	type found struct{ name, text string }
	var got []found
	var misses []string
	viaFS := t.fsConfigured()
	readTool := fsServer + "_read_file"
	if viaFS && t.host.Catalog != nil {
		if _, ok := t.host.Catalog.Snapshot().Lookup(fsServer + "_read_text_file"); ok {
			readTool = fsServer + "_read_text_file"
		}
	}
	for _, m := range manifests {
		p := filepath.Join(dir, m)
		if viaFS {
			text, err := t.callFS(ctx, call, readTool, map[string]any{"path": p})
			if err != nil {
				misses = append(misses, fmt.Sprintf("%s: %v", m, firstLine(err.Error())))
				continue
			}
			got = append(got, found{m, text})
			continue
		}
		b, err := readManifest(ctx, p)
		if err != nil {
			misses = append(misses, fmt.Sprintf("%s: %v", m, err))
			continue
		}
		got = append(got, found{m, string(b)})
	}

	var b strings.Builder
	fmt.Fprintf(&b, "You are the documentation architect for the project at %s.\n", dir)
	b.WriteString("Write (or rewrite) its README.md and a docs/ set: what the project is and who it is for, how to install it, a quick start that works when pasted, configuration, the architecture in a page, and how to contribute. Use only facts you can check in the code; mark anything you infer.\n")
	if len(got) == 0 {
		how := "read directly"
		if viaFS {
			how = "through the filesystem server (" + readTool + ")"
		}
		fmt.Fprintf(&b, "\nNo project manifest could be read %s, so there is no project metadata below: inspect the code first.\n", how)
	}
	for _, f := range got {
		text := f.text
		if len(text) > maxManifest {
			text = text[:maxManifest] + "\n[... truncated]"
		}
		fmt.Fprintf(&b, "\n### %s\n```\n%s\n```\n", f.name, strings.TrimRight(text, "\n"))
	}
	if len(misses) > 0 {
		b.WriteString("\nNot read:\n")
		for _, m := range misses {
			fmt.Fprintf(&b, "- %s\n", m)
		}
	}
	if s := t.lib.Index().Resolve("docs-architect"); s != nil {
		fmt.Fprintf(&b, "\n### Procedure (skill %s)\n%s\n", s.URI, strings.TrimSpace(s.Body))
	}
	return native.Text("%s", b.String()), nil
}

// readManifest reads a project manifest from disk; used only when no
// filesystem server is configured, and only for the manifest names.
func readManifest(ctx context.Context, p string) ([]byte, error) {
	b, err := safefile.ReadFile(ctx, p, safefile.Options{MaxBytes: 4 * maxManifest})
	var tl *safefile.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, fmt.Errorf("too large (over %d bytes)", tl.Limit)
	case err != nil:
		return nil, fmt.Errorf("not found") // or refused: one answer for both
	}
	return b, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
