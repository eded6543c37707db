package hooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/statefile"
)

// minPurpose is the shortest prompt accepted as a session's purpose.
const minPurpose = 10

// reminderEvery is how many prompts pass between purpose reminders.
const reminderEvery = 5

// modes are the steering modes purpose-gate can pick, with the words in
// a purpose that choose them and the focus injected for each.
var modes = []struct {
	name, focus string
	words       []string
}{
	{"security-audit", "Look for vulnerabilities; change nothing without saying why it is safer.", []string{"security", "audit", "vulnerab", "cve", "pentest"}},
	{"debug", "Reproduce first, then find the cause; keep changes minimal and prove the fix with a test.", []string{"debug", "bug", "fix", "crash", "error", "failing", "broken"}},
	{"review", "Read and comment; do not edit unless asked.", []string{"review", "critique", "feedback"}},
	{"research", "Read, search and summarise; do not edit files.", []string{"research", "investigate", "explore", "understand", "compare", "learn"}},
	{"dev", "Build in small steps, run the tests, and leave evidence of each change.", nil},
}

func modeFor(purpose string) (name, focus string) {
	p := strings.ToLower(purpose)
	for _, m := range modes {
		for _, w := range m.words {
			if strings.Contains(p, w) {
				return m.name, m.focus
			}
		}
	}
	last := modes[len(modes)-1]
	return last.name, last.focus
}

// purposeGate is the UserPromptSubmit hook that asks for, records and
// recalls the session's purpose.
func purposeGate(r *run) (int, error) {
	s, err := Fold(r.Home, r.sid)
	if err != nil {
		return ExitOK, err
	}
	prompt := strings.TrimSpace(r.p.prompt())
	switch {
	case s.CreatedAt == "" || s.PromptCount == 0:
		root := r.cwd()
		repo := gitRoot(root)
		if _, err := r.record(EvSessionInitialized, map[string]any{
			"workspaceRoot": root, "canonicalRepoRoot": repo, "repoName": filepath.Base(repo),
		}); err != nil {
			return ExitOK, err
		}
		return ExitOK, r.addContext("[EVOKORE purpose gate] Before starting, state this session's goal in one sentence " +
			"(what will be true when it is done). Values: say what you did and how you checked it; prefer small, " +
			"reversible changes; never touch secrets or force-push shared branches.")
	case s.Purpose == "":
		if len([]rune(prompt)) < minPurpose {
			_, err := r.record(EvTaskAction, map[string]any{"action": "prompt", "note": "purpose too short"})
			if err != nil {
				return ExitOK, err
			}
			return ExitOK, r.addContext(fmt.Sprintf("[EVOKORE purpose gate] The session has no purpose yet: state it in at least %d characters.", minPurpose))
		}
		mode, focus := modeFor(prompt)
		if _, err := r.record(EvPurposeRecorded, map[string]any{"purpose": prompt, "mode": mode}); err != nil {
			return ExitOK, err
		}
		return ExitOK, r.addContext(fmt.Sprintf("[EVOKORE purpose gate] Purpose recorded. Mode: %s. Focus: %s", mode, focus))
	}
	reminder := fmt.Sprintf("[EVOKORE purpose gate] Reminder: this session's purpose is %q (mode %s). Stay on it or say why not.", s.Purpose, s.Mode)
	due := (s.PromptCount+1)%reminderEvery == 0
	hashPath := r.file("-purpose-hash.txt")
	sum := sha256.Sum256([]byte(reminder + fmt.Sprint(s.PromptCount/reminderEvery)))
	h := hex.EncodeToString(sum[:])
	prev, _ := safefile.Load(hashPath, safefile.MaxStateBytes)
	if !due || strings.TrimSpace(string(prev)) == h {
		_, err := r.record(EvTaskAction, map[string]any{"action": "prompt"})
		return ExitOK, err
	}
	if _, err := r.record(EvPurposeReminder, map[string]any{"purpose": s.Purpose}); err != nil {
		return ExitOK, err
	}
	if err := statefile.WriteAtomic(hashPath, []byte(h+"\n"), 0o600); err != nil {
		return ExitOK, err
	}
	return ExitOK, r.addContext(reminder)
}

// gitRoot is the repository dir is in, or dir itself.
func gitRoot(dir string) string {
	if dir == "" {
		return ""
	}
	out, err := gitOutput(dir, "rev-parse", "--show-toplevel")
	if err != nil || out == "" {
		return dir
	}
	return out
}

func gitOutput(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// repoAudit is the UserPromptSubmit hook that, once per session, looks at
// the repository's state and warns about what could hurt the session.
func repoAudit(r *run) (int, error) {
	if strings.EqualFold(r.getenv("EVOKORE_REPO_AUDIT_HOOK"), "false") {
		return ExitOK, nil
	}
	marker := r.file("-audit-done")
	if _, err := os.Stat(marker); err == nil {
		return ExitOK, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return ExitOK, err
	}
	if err := statefile.WriteAtomic(marker, []byte(r.now.UTC().Format(time.RFC3339)+"\n"), 0o600); err != nil {
		return ExitOK, err
	}
	warnings := auditRepo(r.cwd())
	_ = r.log("repo_audit", map[string]any{"warnings": len(warnings)})
	if len(warnings) == 0 {
		return ExitOK, nil
	}
	return ExitOK, r.addContext("[EVOKORE repo audit]\n- " + strings.Join(warnings, "\n- "))
}

// auditRepo lists the repository states worth a warning.
func auditRepo(dir string) []string {
	if dir == "" {
		return nil
	}
	if _, err := gitOutput(dir, "rev-parse", "--git-dir"); err != nil {
		return nil
	}
	var w []string
	if b, err := gitOutput(dir, "symbolic-ref", "--short", "HEAD"); err == nil && (b == "main" || b == "master") {
		w = append(w, fmt.Sprintf("You are on %s: create a branch before changing anything.", b))
	}
	if st, err := gitOutput(dir, "status", "--porcelain"); err == nil && st != "" {
		lines := strings.Split(st, "\n")
		w = append(w, fmt.Sprintf("%d uncommitted change(s) are already in the working tree; do not mix them with this session's work.", len(lines)))
		for _, l := range lines {
			name := strings.TrimSpace(l[min(3, len(l)):])
			if strings.HasPrefix(l, "??") && (filepath.Base(name) == ".env" || strings.HasPrefix(filepath.Base(name), ".env.")) {
				w = append(w, name+" is untracked and not ignored: add it to .gitignore before it is committed.")
			}
		}
	}
	if st, err := gitOutput(dir, "status", "--porcelain=v1", "--branch"); err == nil {
		first, _, _ := strings.Cut(st, "\n")
		if strings.Contains(first, "[behind") || strings.Contains(first, ", behind") {
			w = append(w, "The branch is behind its upstream: pull before starting.")
		}
	}
	for _, f := range []string{"MERGE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD"} {
		if gd, err := gitOutput(dir, "rev-parse", "--git-path", f); err == nil {
			if !filepath.IsAbs(gd) {
				gd = filepath.Join(dir, gd)
			}
			if _, err := os.Stat(gd); err == nil {
				w = append(w, "A merge, rebase or cherry-pick is in progress: finish or abort it first.")
				break
			}
		}
	}
	return w
}
