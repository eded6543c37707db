package skilltools

import (
	"os"
	"path/filepath"
	"testing"
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
