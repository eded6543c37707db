package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/statefile"
)

// Claude Code keeps a project's memory in
// ~/.claude/projects/<slug of the project path>/memory/, MEMORY.md first.
// EVOKORE-MCP's Stop hook wrote four files there at the end of a session
// that did something (MEMORY.md, project-state.md, patterns.md,
// workflow.md), so the next session starts knowing the branch, the purpose
// and the evidence; tilldone writes the same four. EVOKORE_AUTO_MEMORY_SYNC=false
// turns it off; EVOKORE_CLAUDE_MEMORY_DIR names the directory outright and
// EVOKORE_CLAUDE_PROJECTS_DIR replaces ~/.claude/projects, as in
// EVOKORE-MCP.
//
// A file is replaced only when evokore or EVOKORE-MCP wrote it (its first
// line is memoryMarker or one of EVOKORE-MCP's headings): a MEMORY.md the
// user or Claude wrote is left as it is.

// memoryMarker starts every memory file evokore writes.
const memoryMarker = "<!-- written by evokore's Stop hook (tilldone); it is replaced at each stop -->"

// legacyMemoryHeadings are the first lines of EVOKORE-MCP's memory files.
var legacyMemoryHeadings = []string{"# EVOKORE-MCP Memory", "# Project State", "# Stable Patterns", "# Workflow"}

// memoryFiles are the files written, in order.
var memoryFiles = []string{"MEMORY.md", "project-state.md", "patterns.md", "workflow.md"}

var slugJunk = regexp.MustCompile(`[^a-zA-Z0-9._-]`)
var slugDashes = regexp.MustCompile(`-+`)

// projectSlug is EVOKORE-MCP's directory name for a project under
// ~/.claude/projects: the absolute path with every character other than
// letters, digits, '.', '_' and '-' turned into '-', runs of '-' made one,
// and no leading '-'.
func projectSlug(dir string) string {
	s := slugJunk.ReplaceAllString(filepath.Clean(dir), "-")
	return strings.TrimPrefix(slugDashes.ReplaceAllString(s, "-"), "-")
}

// memoryDir is where a project's memory files go.
func (r *run) memoryDir(root string) (string, error) {
	if d := r.getenv("EVOKORE_CLAUDE_MEMORY_DIR"); d != "" {
		return filepath.Abs(d)
	}
	projects := r.getenv("EVOKORE_CLAUDE_PROJECTS_DIR")
	if projects == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		projects = filepath.Join(home, ".claude", "projects")
	}
	// Claude Code's own directory for the project, when it has one, is
	// where Claude reads memory; else EVOKORE-MCP's name for it.
	if claude := filepath.Join(projects, claudeSlug(root)); isDir(claude) {
		return filepath.Join(claude, "memory"), nil
	}
	return filepath.Join(projects, projectSlug(root), "memory"), nil
}

// claudeSlug is Claude Code's name for a project's directory: the
// absolute path with every character but letters and digits turned
// into '-'.
func claudeSlug(dir string) string {
	return claudeJunk.ReplaceAllString(filepath.Clean(dir), "-")
}

var claudeJunk = regexp.MustCompile(`[^a-zA-Z0-9]`)

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// syncMemory writes the project's memory files for a session that
// stopped after doing something; it reports where, or why not.
func syncMemory(r *run, s State, tasks []Task) error {
	if strings.EqualFold(r.getenv("EVOKORE_AUTO_MEMORY_SYNC"), "false") {
		return nil
	}
	if s.ToolCount == 0 && s.EvidenceCount == 0 && s.LastTool == "" {
		return r.log("auto_memory_sync_skipped", map[string]any{"reason": "no activity"})
	}
	cwd := r.cwd()
	if cwd == "" {
		return errors.New("memory sync: no working directory")
	}
	root := gitRoot(cwd)
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	dir, err := r.memoryDir(root)
	if err != nil {
		return fmt.Errorf("memory sync: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("memory sync: %w", err)
	}
	files := memoryContents(projectFacts(root, cwd), s, tasks)
	var written, kept []string
	for _, name := range memoryFiles {
		path := filepath.Join(dir, name)
		if !replaceable(path) {
			kept = append(kept, name)
			continue
		}
		if err := statefile.WriteAtomic(path, []byte(files[name]), 0o600); err != nil {
			return fmt.Errorf("memory sync: %w", err)
		}
		written = append(written, name)
	}
	return r.log("auto_memory_sync", map[string]any{"dir": dir, "written": written, "kept": kept})
}

// replaceable reports whether the file at path is missing or one evokore
// or EVOKORE-MCP wrote.
func replaceable(path string) bool {
	data, err := safefile.Load(path, safefile.MaxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	first = bytes.TrimSpace(first)
	if string(first) == memoryMarker {
		return true
	}
	for _, h := range legacyMemoryHeadings {
		if string(first) == h {
			return true
		}
	}
	return false
}

// project is what git says of the project.
type project struct {
	root, worktree, name, branch, head string
	changes                            []string
}

func projectFacts(root, cwd string) project {
	p := project{root: root, worktree: cwd, name: filepath.Base(root), branch: "unknown", head: "unknown"}
	if out, err := gitOutput(cwd, "branch", "--show-current"); err == nil && out != "" {
		p.branch = out
	}
	if out, err := gitOutput(cwd, "rev-parse", "--short", "HEAD"); err == nil && out != "" {
		p.head = out
	}
	if out, err := gitOutput(cwd, "status", "--short"); err == nil && out != "" {
		p.changes = strings.Split(out, "\n")
		if len(p.changes) > 50 {
			p.changes = append(p.changes[:50], fmt.Sprintf("… and %d more", len(p.changes)-50))
		}
	}
	return p
}

// memoryContents writes the four files' text.
func memoryContents(p project, s State, tasks []Task) map[string]string {
	purpose := s.Purpose
	if purpose == "" {
		purpose = "none recorded"
	}
	activity := s.LastActivity
	if activity == "" {
		activity = "unknown"
	}
	open := openTasks(tasks)
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	take := func() string { out := b.String(); b.Reset(); return out }

	line("%s", memoryMarker)
	line("# %s memory", p.name)
	line("")
	line("- [project-state.md](project-state.md): branch, commit, working tree and the last session.")
	line("- [workflow.md](workflow.md): open tasks and where the session records are.")
	line("- [patterns.md](patterns.md): what the evokore hooks keep and enforce.")
	line("")
	line("## Last session")
	line("- Purpose: %s", purpose)
	line("- Branch `%s` at `%s`", p.branch, p.head)
	line("- Last activity: %s", activity)
	line("- %d tool calls, %d pieces of evidence, %d of %d tasks open", s.ToolCount, s.EvidenceCount, len(open), len(tasks))
	memory := take()

	line("%s", memoryMarker)
	line("# Project state")
	line("")
	line("- Repository: `%s`", p.root)
	if p.worktree != p.root {
		line("- Working directory: `%s`", p.worktree)
	}
	line("- Branch: `%s`", p.branch)
	line("- HEAD: `%s`", p.head)
	line("- Uncommitted changes: %d", len(p.changes))
	for _, c := range p.changes {
		line("  - `%s`", c)
	}
	line("")
	line("## Session `%s`", s.SessionID)
	line("- Purpose: %s", purpose)
	if s.Mode != "" {
		line("- Mode: %s", s.Mode)
	}
	line("- Status: %s", s.Status)
	line("- Tool calls: %d; evidence: %d", s.ToolCount, s.EvidenceCount)
	if s.LastEditedFile != "" {
		line("- Last edited file: `%s`", s.LastEditedFile)
	}
	state := take()

	line("%s", memoryMarker)
	line("# Patterns")
	line("")
	line("- Every tool call of a session is replayed in `EVOKORE_HOME/sessions/<session>-replay.jsonl`.")
	line("- Tests, git operations and file changes are hash-chained evidence in `<session>-evidence.jsonl`; `evokore hooks verify <session>` checks the chain.")
	line("- A stop is refused while `<session>-tasks.json` lists an open task.")
	line("- Dangerous commands and protected paths are blocked before the tool runs (damage-control).")
	patterns := take()

	line("%s", memoryMarker)
	line("# Workflow")
	line("")
	if len(open) == 0 {
		line("No open tasks at the last stop.")
	} else {
		line("Open tasks at the last stop:")
		for _, t := range open {
			line("- [ ] %s", t.label())
		}
	}
	line("")
	line("Session records: `EVOKORE_HOME/sessions/%s.jsonl` (manifest), `-replay.jsonl`, `-evidence.jsonl`, `-tasks.json`.", s.SessionID)
	workflow := take()

	return map[string]string{"MEMORY.md": memory, "project-state.md": state, "patterns.md": patterns, "workflow.md": workflow}
}
