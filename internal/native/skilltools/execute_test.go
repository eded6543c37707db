package skilltools_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// admin runs calls under the shipped admin role: execute_skill needs a
// human's approval otherwise.
var admin = map[string]string{"EVOKORE_ROLE": "admin", "EVOKORE_SANDBOX_MODE": "process"}

func env(extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range admin {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

const runnable = "---\nname: runner\ndescription: Has steps to run.\nversion: 1.0.0\n---\n\n# Runner\n\nFirst:\n\n" +
	"```bash\necho \"hello from $SKILL_GREETING\"\necho \"session=$EVOKORE_SESSION_ID sandbox=$EVOKORE_SANDBOX\"\necho \"leak=${PARENT_SECRET:-none}\"\n```\n\n" +
	"```sh\necho to-stderr >&2\nexit 3\n```\n\n" +
	"```\nplain text block\n```\n\n" +
	"```ruby\nputs 1\n```\n\n" +
	"```python\nprint('py', 6*7)\n```\n\n" +
	"Then see [after](skill://cat/after).\n"

func TestExecuteSkillListsAndRunsSteps(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("bash steps")
	}
	dir := library(t, map[string]string{
		"cat/runner/SKILL.md": runnable,
		"cat/after/SKILL.md":  doc("after", "What to do next."),
		"cat/user/SKILL.md":   doc("user", "Builds on runner.", "requires: [runner@^1]"),
	})
	_, cs := withSkills(t, dir, env(map[string]string{"PARENT_SECRET": "s3cr3t"}))

	text, isErr := routertest.CallText(t, cs, "execute_skill", map[string]any{"skill_name": "runner"})
	for _, want := range []string{
		"Skill 'runner' has 5 code block(s).",
		"Step 0 [bash] (runnable), line 11:\n```bash\necho \"hello from $SKILL_GREETING\"",
		"Step 2 [text] (not runnable: unsupported language)",
		"Step 3 [ruby] (not runnable: unsupported language)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("listing lacks %q:\n%s", want, text)
		}
	}
	if isErr {
		t.Error("listing is not an error")
	}

	res := routertest.Call(t, cs, "execute_skill", map[string]any{"skill_name": "runner", "step": 0, "env": map[string]any{"SKILL_GREETING": "the test"}})
	text = routertest.Text(res)
	for _, want := range []string{
		"[sandbox: process]\nExit code: 0\n--- stdout ---\nhello from the test\nsession=",
		"sandbox=process\nleak=none\n--- stderr ---\n",
		"Next steps:\n- after: linked from runner\n- user: builds on runner (requires it)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("run lacks %q:\n%s", want, text)
		}
	}
	if res.IsError || strings.Contains(text, "session=\n") || strings.Contains(text, "s3cr3t") {
		t.Errorf("isError=%v or the session id is missing or a parent secret leaked:\n%s", res.IsError, text)
	}
	raw, _ := json.Marshal(res.Meta["nextSteps"])
	var next []struct{ Skill, Reason, URI string }
	if err := json.Unmarshal(raw, &next); err != nil || len(next) != 2 || next[0].Skill != "after" || next[0].URI != "skill://cat/after" || next[1].Skill != "user" {
		t.Errorf("_meta.nextSteps = %s (%v)", raw, err)
	}

	res = routertest.Call(t, cs, "execute_skill", map[string]any{"skill_name": "runner", "step": 1})
	text = routertest.Text(res)
	if !res.IsError || !strings.Contains(text, "Exit code: 3\n") || !strings.Contains(text, "--- stderr ---\nto-stderr") {
		t.Errorf("failing step: isError=%v\n%s", res.IsError, text)
	}

	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"skill_name": "runner", "step": 2}, "Step 2 of 'runner' is a block whose fence names no language, which execute_skill does not run"},
		{map[string]any{"skill_name": "runner", "step": 3}, "Step 3 of 'runner' is a 'ruby' block"},
		{map[string]any{"skill_name": "runner", "step": 5}, "Step 5 does not exist: skill 'runner' has 5 code block(s)"},
		{map[string]any{"skill_name": "runner", "step": 0, "env": map[string]any{"PATH": "/tmp"}}, `Refusing to run: "PATH" may not be set. execute_skill passes only variables named SKILL_*`},
		{map[string]any{"skill_name": "runner", "step": 0, "env": map[string]any{"ld_preload": "x.so", "NODE_OPTIONS": "--require x"}}, `Refusing to run: "NODE_OPTIONS", "ld_preload" may not be set.`},
		{map[string]any{"skill_name": "runner", "step": 0, "env": map[string]any{"BAD NAME": "x"}}, `Refusing to run: "BAD NAME" may not be set.`},
		{map[string]any{"skill_name": "runner", "step": 0, "env": map[string]any{"SHELLOPTS": "xtrace", "PS4": "$(touch /tmp/pwned)"}}, `Refusing to run: "PS4", "SHELLOPTS" may not be set.`},
		{map[string]any{"skill_name": "runner", "step": 0, "env": map[string]any{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": "touch /tmp/pwned"}}, `Refusing to run: "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0" may not be set.`},
		{map[string]any{"skill_name": "runer"}, "Skill 'runer' not found. execute_skill needs an exact skill name or category/name key. Did you mean: runner"},
	} {
		text, isErr := routertest.CallText(t, cs, "execute_skill", c.args)
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("%v: isError=%v %q", c.args, isErr, text)
		}
	}
}

func TestExecuteSkillRunsPythonWhenPresent(t *testing.T) {
	testutil.Python(t)
	dir := library(t, map[string]string{"cat/runner/SKILL.md": runnable})
	_, cs := withSkills(t, dir, admin)
	text, isErr := routertest.CallText(t, cs, "execute_skill", map[string]any{"skill_name": "runner", "step": 4})
	if isErr || !strings.Contains(text, "--- stdout ---\npy 42\n") {
		t.Errorf("python step: %v\n%s", isErr, text)
	}
}

func TestExecuteSkillTimeoutKillsTheProcessGroup(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process groups")
	}
	pidfile := filepath.Join(t.TempDir(), "child.pid")
	skill := "---\nname: hang\ndescription: Starts a background child and hangs.\n---\n\n```bash\n" +
		"sleep 300 &\necho $! > " + pidfile + "\necho started\nsleep 300\n```\n"
	dir := library(t, map[string]string{"cat/hang/SKILL.md": skill})
	_, cs := withSkills(t, dir, env(map[string]string{"EVOKORE_SANDBOX_TIMEOUT_MS": "1500"}))
	res := routertest.Call(t, cs, "execute_skill", map[string]any{"skill_name": "hang", "step": 0})
	text := routertest.Text(res)
	if !res.IsError || !strings.Contains(text, "[sandbox: process]\n[TIMED OUT after 1.5s]\nExit code: -1\n--- stdout ---\nstarted") {
		t.Fatalf("isError=%v\n%s", res.IsError, text)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The background sleep was in the script's process group: it must be
	// gone (or a zombie waiting for init to reap it), not left running.
	routertest.WaitGone(t, 30*time.Second, pid)
}

func TestExecuteSkillOutputCap(t *testing.T) {
	skill := "---\nname: noisy\ndescription: Prints forever.\n---\n\n```sh\nyes 0123456789abcdef\n```\n"
	dir := library(t, map[string]string{"cat/noisy/SKILL.md": skill})
	_, cs := withSkills(t, dir, admin)
	res := routertest.Call(t, cs, "execute_skill", map[string]any{"skill_name": "noisy", "step": 0})
	text := routertest.Text(res)
	if !res.IsError || !strings.Contains(text, "[OUTPUT TRUNCATED at 1 MB; the run was stopped]") || len(text) > (1<<20)+4096 {
		t.Fatalf("isError=%v len=%d head=%q", res.IsError, len(text), text[:min(200, len(text))])
	}
}

func TestExecuteSkillActivatesNamedToolsInDynamicMode(t *testing.T) {
	dir := library(t, map[string]string{
		"cat/first/SKILL.md":  "---\nname: first\ndescription: Runs a step.\ntools: [fx_echo]\n---\n\n```sh\necho ok\n```\n\nNext: [second](skill://cat/second)\n",
		"cat/second/SKILL.md": "---\nname: second\ndescription: Uses the fixture's count tool.\nallowed-tools: fx_count, Bash(git:*)\n---\nbody\n",
	})
	vars := env(map[string]string{"EVOKORE_SKILLS_DIR": dir})
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, vars)
	cs := h.Connect(nil)
	h.Booted()
	if names := routertest.ToolNames(t, cs); slices.Contains(names, "fx_echo") || slices.Contains(names, "fx_count") {
		t.Fatalf("proxied tools are hidden in dynamic mode before activation: %v", names)
	}
	res := routertest.Call(t, cs, "execute_skill", map[string]any{"skill_name": "first", "step": 0})
	if res.IsError || !strings.Contains(routertest.Text(res), "Activated for this session: fx_echo, fx_count") {
		t.Fatalf("%v\n%s", res.IsError, routertest.Text(res))
	}
	if got := res.Meta["activatedTools"]; got == nil {
		t.Errorf("_meta.activatedTools missing: %v", res.Meta)
	}
	routertest.WaitFor(t, "activated tools listed", func() bool {
		names := routertest.ToolNames(t, cs)
		return slices.Contains(names, "fx_echo") && slices.Contains(names, "fx_count")
	})
	// Another session is unaffected.
	other := h.Connect(nil)
	if names := routertest.ToolNames(t, other); slices.Contains(names, "fx_echo") {
		t.Errorf("activation leaked into another session")
	}
	_, _ = other.ListTools(context.Background(), &mcp.ListToolsParams{})
}

func TestExecuteSkillListingSaysWhatCannotRunHere(t *testing.T) {
	if _, err := exec.LookPath("tsx"); err == nil {
		t.Skip("tsx is installed")
	}
	dir := library(t, map[string]string{"cat/ts/SKILL.md": "---\nname: ts\ndescription: TypeScript.\n---\n\n```ts\nconsole.log(1)\n```\n"})
	_, cs := withSkills(t, dir, admin)
	text, _ := routertest.CallText(t, cs, "execute_skill", map[string]any{"skill_name": "ts"})
	if !strings.Contains(text, "Step 0 [ts] (not runnable here: no ts interpreter (tsx) on PATH)") {
		t.Errorf("%s", text)
	}
	text, isErr := routertest.CallText(t, cs, "execute_skill", map[string]any{"skill_name": "ts", "step": 0})
	if !isErr || !strings.Contains(text, "Cannot run step 0 of 'ts': no ts interpreter (tsx) on PATH.") {
		t.Errorf("%v %q", isErr, text)
	}
}

func TestExecuteSkillLeavesNoSetsidHelperBehind(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("setsid helpers are contained through /proc, which only Linux has")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid on PATH")
	}
	pidfile := filepath.Join(t.TempDir(), "helper.pid")
	// The helper leaves the process group and the session, and the step
	// exits at once: nothing but the launcher's tree mark finds it.
	// setsid may fork first, so the helper writes its own pid.
	skill := "---\nname: escape\ndescription: Leaves a helper behind.\n---\n\n```sh\n" +
		"setsid sh -c 'echo $$ > \"$0.tmp\"; mv \"$0.tmp\" \"$0\"; exec sleep 300' \"$SKILL_PIDFILE\" </dev/null >/dev/null 2>&1 &\n" +
		"while [ ! -s \"$SKILL_PIDFILE\" ]; do sleep 0.05; done\necho left\n```\n"
	dir := library(t, map[string]string{"cat/escape/SKILL.md": skill})
	_, cs := withSkills(t, dir, admin)
	res := routertest.Call(t, cs, "execute_skill", map[string]any{"skill_name": "escape", "step": 0, "env": map[string]any{"SKILL_PIDFILE": pidfile}})
	if text := routertest.Text(res); res.IsError || !strings.Contains(text, "Exit code: 0\n--- stdout ---\nleft") {
		t.Fatalf("isError=%v\n%s", res.IsError, text)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	routertest.WaitGone(t, 10*time.Second, pid)
}
