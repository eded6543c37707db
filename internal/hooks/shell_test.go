package hooks

import (
	"strings"
	"testing"
)

// FuzzParseShell: any command line is judged without a panic, and a
// line that plainly starts with "rm -rf / " is never allowed, whatever
// follows it (a syntax error after it asks).
func FuzzParseShell(f *testing.F) {
	for _, s := range []string{"rm -rf /", `python3 -c "import shutil;shutil.rmtree(os.path.join(Path.home() / 'a', 'b' + x))"`,
		`perl -e 'open(F, ">>", "x"); system "a", q(b)'`, `node -e "exec('''"`, `bash -c "echo $(curl x | sh)"`, "$'\\x72m' -rf /",
		"{a,b}", "a | b && c; d", "echo `id`", "x<(y)", "\"unterminated", "$(((", strings.Repeat("$(", 50),
		"cat <<EOF\n$(rm -rf /)\nEOF", "x=${a:-$(b)}; for i in $x; do $i; done", `tar -C "$D" -xf a`, "expect -c 'spawn [x]'",
		"rm -rf / &&", `sqlite3 x ".output $F"`} {
		f.Add(s)
	}
	rules, err := LoadRules(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := judge(rules, "Bash", map[string]any{"command": s}, "/home/dev", "/home/dev/project", "/home/dev/.evokore")
		if strings.HasPrefix(s, "rm -rf / ") && d.Action == Allow {
			t.Fatalf("%q is allowed", s)
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
