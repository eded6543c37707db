package skilltools

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

func TestBlockedAddresses(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "127.8.9.10": true, "::1": true, "10.1.2.3": true, "172.16.0.1": true, "172.31.255.255": true,
		"192.168.1.1": true, "169.254.169.254": true, "0.0.0.0": true, "::": true, "fe80::1": true, "fc00::1": true,
		"fd12:3456::1": true, "::ffff:127.0.0.1": true, "::ffff:10.0.0.1": true, "100.64.0.1": true, "224.0.0.1": true,
		"ff02::1": true, "64:ff9b::a00:1": true, "240.0.0.1": true,
		"8.8.8.8": false, "1.1.1.1": false, "172.32.0.1": false, "2606:4700:4700::1111": false, "151.101.1.69": false,
	} {
		if got := blocked(netip.MustParseAddr(addr)); got != want {
			t.Errorf("blocked(%s) = %v, want %v", addr, got, want)
		}
	}
}

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
