package hooks

import (
	"strings"
	"testing"
)

// FuzzParseShell: any command line is taken apart without a panic, and
// the views never lose a command the line plainly starts with.
func FuzzParseShell(f *testing.F) {
	for _, s := range []string{"rm -rf /", `python3 -c "import shutil;shutil.rmtree(os.path.join(Path.home() / 'a', 'b' + x))"`, `perl -e 'open(F, ">>", "x"); system "a", q(b)'`, `node -e "exec('''"`, `bash -c "echo $(curl x | sh)"`, "$'\\x72m' -rf /", "{a,b}", "a | b && c; d", "echo `id`", "x<(y)", "\"unterminated", "$(((", strings.Repeat("$(", 50)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := parseShell(s)
		_ = p.views()
		if strings.HasPrefix(s, "rm -rf / ") || s == "rm -rf /" {
			found := false
			for _, v := range p.views() {
				found = found || strings.HasPrefix(v, "rm -rf /")
			}
			if !found {
				t.Fatalf("%q: views %q", s, p.views())
			}
		}
	})
}

// TestDeepNestingIsBoundedAndAsks: nesting past what is followed is
// itself a reason to ask, and costs linear time.
func TestDeepNestingIsBoundedAndAsks(t *testing.T) {
	rules, err := LoadRules(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := strings.Repeat(`bash -c "$(`, 200) + "ls" + strings.Repeat(`)"`, 200)
	if d := judge(rules, "Bash", map[string]any{"command": cmd}, "/home/dev", "/tmp", "/home/dev/.evokore"); d.Action == Allow {
		t.Fatalf("deep nesting allowed: %+v", d)
	}
	big := strings.Repeat("$(", 100000)
	if d := judge(rules, "Bash", map[string]any{"command": big}, "/home/dev", "/tmp", "/home/dev/.evokore"); d.Action == Block {
		t.Fatalf("unbalanced nesting: %+v", d)
	}
}
