package skilltools_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

var heldApproval = regexp.MustCompile(`approval id ([0-9a-f]{16})`)

// An approval of execute_skill is bound to the code of the step it runs:
// code replaced after the operator approved (by fetch_skill, an edit) is
// held again instead of running unseen.
func TestExecuteSkillApprovalBindsTheStepCode(t *testing.T) {
	script := func(word string) string {
		return "---\nname: binder\ndescription: One step.\n---\n\n# Binder\n\n```sh\necho " + word + "\n```\n"
	}
	dir := library(t, map[string]string{"cat/binder/SKILL.md": script("approved-code")})
	h, cs := withSkills(t, dir, map[string]string{"EVOKORE_SANDBOX_MODE": "process"})
	home := filepath.Join(h.Dir, "home")
	args := map[string]any{"skill_name": "binder", "step": 0}

	text, _ := routertest.CallText(t, cs, "execute_skill", args)
	m := heldApproval.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("execute_skill was not held: %q", text)
	}
	// The human deciding sees the code the approval binds, not only the
	// skill's name.
	pending, err := policy.ListPending(home, time.Now())
	if err != nil || len(pending) != 1 || !strings.Contains(pending[0].Arguments, "step 0 runs this sh block") ||
		!strings.Contains(pending[0].Arguments, "\n| echo approved-code") {
		t.Fatalf("the held call does not show its code: %+v %v", pending, err)
	}
	if err := policy.ApproveApproval(home, m[1], time.Now()); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, dir, "cat/binder/SKILL.md", script("swapped-code"))
	routertest.CallText(t, cs, "refresh_skills", map[string]any{})

	text, _ = routertest.CallText(t, cs, "execute_skill", args)
	if strings.Contains(text, "swapped-code") || !heldApproval.MatchString(text) {
		t.Fatalf("the approved retry ran code nobody approved: %q", text)
	}
	if again := heldApproval.FindStringSubmatch(text); again[1] == m[1] {
		t.Errorf("the changed step kept the approval %s", m[1])
	}
}
