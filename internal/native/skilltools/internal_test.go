package skilltools

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/skills"
	"github.com/evokore/evokore/internal/testutil"
)

func TestSanitizeSegment(t *testing.T) {
	for in, want := range map[string]string{
		"plain": "plain", " spaced ": "spaced", `a<b>c:d"e|f?g*h`: "a_b_c_d_e_f_g_h", "tab\tname": "tab_name", "My Skill": "My Skill",
	} {
		got, err := sanitizeSegment("name", in)
		if err != nil || got != want {
			t.Errorf("sanitizeSegment(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", " ", ".", "..", "../x", "a/b", `a\b`, "x..y", "/abs"} {
		if got, err := sanitizeSegment("name", bad); err == nil {
			t.Errorf("sanitizeSegment(%q) = %q, want an error", bad, got)
		}
	}
}

func TestInsideFollowsSymlinks(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		filepath.Join(root, "cat", "x", "SKILL.md"):    true,
		filepath.Join(root, "escape", "x", "SKILL.md"): false,
		filepath.Join(root, "..", "x"):                 false,
		outside:                                        false,
		root:                                           true,
	} {
		if got := inside(root, p); got != want {
			t.Errorf("inside(%s) = %v, want %v", p, got, want)
		}
	}
}

func TestCheckEnv(t *testing.T) {
	if bad := checkEnv(map[string]string{"SKILL_GREETING": "hi", "SKILL_MY_VAR_2": "x"}); len(bad) != 0 {
		t.Errorf("allowed names refused: %v", bad)
	}
	// The denylist this allowlist replaced missed the second half of this
	// list: each pair or name changes what a step's interpreter runs.
	for _, k := range []string{"PATH", "home", "LD_PRELOAD", "DYLD_LIBRARY_PATH", "PYTHONPATH", "NODE_OPTIONS", "ComSpec", "2BAD", "A-B",
		"GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "SHELLOPTS", "PS4", "PYTHONWARNINGS", "BROWSER", "LD_AUDIT",
		"GREETING", "SKILL_", "skill_x", "SKILL_a"} {
		if bad := checkEnv(map[string]string{k: "x"}); len(bad) != 1 {
			t.Errorf("%s accepted", k)
		}
	}
}

// The approval is checked before the handler reads the library, and the
// library may be re-indexed in between (the watcher, fetch_skill, a
// refresh): the handler runs only the step whose code its approval bound.
// A skill that did not exist when the call was approved binds too.
func TestExecuteSkillRunsOnlyTheCodeItsApprovalBound(t *testing.T) {
	dir := t.TempDir()
	script := func(word string) string {
		return "---\nname: binder\ndescription: One step.\n---\n\n# Binder\n\n```sh\necho " + word + "\n```\n"
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tools := &Tools{host: &native.Host{Log: log}, lib: skills.New(dir, log),
		sandbox: newSandbox(config.NewEnv(map[string]string{"EVOKORE_SANDBOX_MODE": "process", "PATH": os.Getenv("PATH")}), log)}
	args := json.RawMessage(`{"skill_name":"binder","step":0}`)
	run := func(bound string) (string, bool) {
		t.Helper()
		res, err := tools.executeSkill(t.Context(), &native.Call{Args: args, Bound: bound})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	absent, _ := tools.StepBinding(args)
	testutil.WriteFile(t, dir, "cat/binder/SKILL.md", script("approved-code"))
	tools.lib.Refresh()
	if text, isErr := run(absent.Key); !isErr || strings.Contains(text, "approved-code") || !strings.Contains(text, "changed after this run of it was approved") {
		t.Fatalf("a skill created after its approval ran: %q", text)
	}
	approved, _ := tools.StepBinding(args)
	testutil.WriteFile(t, dir, "cat/binder/SKILL.md", script("swapped-code"))
	tools.lib.Refresh()
	if text, isErr := run(approved.Key); !isErr || strings.Contains(text, "swapped-code") {
		t.Fatalf("code nobody approved ran: %q", text)
	}
	now, _ := tools.StepBinding(args)
	if text, isErr := run(now.Key); isErr || !strings.Contains(text, "swapped-code") {
		t.Fatalf("the step its approval bound did not run: %q", text)
	}
	if text, isErr := run(""); isErr || !strings.Contains(text, "swapped-code") {
		t.Fatalf("a call that needed no approval did not run: %q", text)
	}
}
