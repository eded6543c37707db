package hooks

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
)

// TestDamageControlCorpus judges every entry of the corpus with the
// shipped rules and fails on any decision that differs from the expected
// one.
func TestDamageControlCorpus(t *testing.T) {
	rules, err := LoadRules(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/damage-control-corpus.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	counts := map[string]int{}
	total, wrong, line := 0, 0, 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		parts := strings.SplitN(text, "\t", 3)
		if len(parts) != 3 {
			t.Fatalf("corpus line %d: want decision<TAB>tool<TAB>input", line)
		}
		want, tool, input := parts[0], parts[1], parts[2]
		in := map[string]any{"file_path": input}
		if tool == "Bash" {
			in = map[string]any{"command": input}
		}
		got := judge(rules, tool, in, "/home/dev", "/home/dev/project", "/home/dev/.evokore")
		total++
		counts[want]++
		if got.Action != want {
			wrong++
			t.Errorf("line %d: %s %q: got %s (%s), want %s", line, tool, input, got.Action, got.Reason, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if total < 150 {
		t.Fatalf("the corpus has %d entries; it must keep at least 150", total)
	}
	t.Logf("damage-control corpus: %d entries (%d block, %d ask, %d allow), %d mismatches", total, counts[Block], counts[Ask], counts[Allow], wrong)
}

// TestShippedRulesSatisfyTheSchema: the shipped rules are decoded without
// CUE at run time, so the schema is checked here, and both decodings
// must agree.
func TestShippedRulesSatisfyTheSchema(t *testing.T) {
	viaCUE, ds := config.ParseDamageControl(RulesFile, ShippedRules)
	if ds != nil {
		t.Fatal(ds)
	}
	direct, err := config.DecodeDamageControl(RulesFile, ShippedRules)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(viaCUE)
	b, _ := json.Marshal(direct)
	if string(a) != string(b) {
		t.Fatalf("the two decodings differ:\n%s\n%s", a, b)
	}
	if len(direct.BashToolPatterns) < 40 || len(direct.ZeroAccessPaths) < 20 {
		t.Fatalf("the shipped rules look truncated: %d patterns", len(direct.BashToolPatterns))
	}
}

// TestUserRulesAreValidatedOncePerContent: a valid file is evaluated by
// CUE once; an edit that breaks it is caught again.
func TestUserRulesAreValidatedOncePerContent(t *testing.T) {
	home := t.TempDir()
	good := "bashToolPatterns:\n  - pattern: '^danger'\n    reason: r\n"
	if err := os.WriteFile(filepath.Join(home, RulesFile), []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r, err := LoadRules(home)
		if err != nil || len(r.BashToolPatterns) != 1 {
			t.Fatalf("%v %+v", err, r)
		}
	}
	markers, _ := filepath.Glob(filepath.Join(home, "cache", "damage-control-*.valid"))
	if len(markers) != 1 {
		t.Fatalf("markers: %v", markers)
	}
	bad := good + "zeroAccessPath: []\n"
	if err := os.WriteFile(filepath.Join(home, RulesFile), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRules(home)
	if err == nil || !strings.Contains(err.Error(), RulesFile+":4:1") || len(r.BashToolPatterns) < 40 {
		t.Fatalf("a broken edit must be reported and the shipped rules used: %v", err)
	}
}

// BenchmarkDamageControlJudge is one decision on a typical obfuscated
// command, rules already loaded.
func BenchmarkDamageControlJudge(b *testing.B) {
	rules, err := LoadRules(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	in := map[string]any{"command": `cd /tmp && FOO=1 sudo bash -c "echo cm0gLXJmIC8= | base64 -d | sh" || git push -f origin main`}
	for b.Loop() {
		if judge(rules, "Bash", in, "/home/dev", "/home/dev/project", "/home/dev/.evokore").Action != Block {
			b.Fatal("not blocked")
		}
	}
}

// BenchmarkLoadShippedRules is what every damage-control run pays to
// load the shipped rules.
func BenchmarkLoadShippedRules(b *testing.B) {
	home := b.TempDir()
	for b.Loop() {
		if _, err := LoadRules(home); err != nil {
			b.Fatal(err)
		}
	}
}

// TestApprovalSurfacesBehindIndirection: each form a same-user agent
// used to reach evokore's approvals from its shell (issue 46) is judged
// on its parsed syntax: blocked when the line shows it decides an
// approval, asked when indirection hides what it runs.
func TestApprovalSurfacesBehindIndirection(t *testing.T) {
	rules, err := LoadRules(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, want, cmd string }{
		{"percent-encoded dashboard path", Block, `curl -X POST http://127.0.0.1:8899/api/%61pprovals/approve -d '{"id":"1"}'`},
		{"script pty", Block, `script -qc "evokore approvals approve 1" /dev/null`},
		{"python pty", Block, `python3 -c "import pty; pty.spawn(['evokore', 'approvals', 'approve', '1'])"`},
		{"expect pty", Block, "expect <<'EOF'\nspawn evokore approvals approve 1\nexpect \"y/N\"\nsend \"y\\r\"\nEOF"},
		{"socat pty", Block, `socat - EXEC:'evokore approvals approve 1',pty,stderr`},
		{"unbuffer pty", Block, `unbuffer evokore approvals deny 1`},
		{"variable verb", Ask, `evokore approvals $A 1`},
		{"default expansion", Ask, `evokore approvals ${X:-approve} 1`},
		{"xargs", Ask, `echo approve 1 | xargs evokore approvals`},
		{"eval of a variable", Ask, `eval "$CMD"`},
		{"wrapper with unresolved command", Ask, `env "$BIN" approvals list`},
		{"tar -C", Block, `tar -C ~/.evokore -xf /tmp/a.tar`},
		{"unzip -d", Block, `unzip -o /tmp/a.zip -d $EVOKORE_HOME`},
		{"git -C apply", Block, `git -C /home/dev/.evokore apply /tmp/p.diff`},
		{"sqlite3 .output in a heredoc", Block, "sqlite3 /tmp/x.db <<EOF\n.output /home/dev/.evokore/approvals/decisions.jsonl\nselect '{}';\nEOF"},
		{"vim", Block, `vim +'w! ~/.evokore/approvals/decisions.jsonl' /tmp/d`},
		{"shell fed a heredoc", Block, "bash <<'EOF'\necho x >> ~/.evokore/approvals/decisions.jsonl\nEOF"},
		{"herestring to a shell", Block, `sh <<< 'evokore approvals approve 1'`},
		{"at job", Block, `echo 'evokore approvals approve 1' | at now`},
		{"positional parameters of sh -c", Block, `sh -c 'evokore approvals "$1" 1' _ approve`},
		{"statements before a syntax error", Block, "evokore approvals approve 1\necho 'unterminated"},
		{"syntax error alone asks", Ask, "echo 'unterminated"},
	} {
		d := judge(rules, "Bash", map[string]any{"command": c.cmd}, "/home/dev", "/home/dev/project", "/home/dev/.evokore")
		if d.Action != c.want {
			t.Errorf("%s: %q: got %s (%s), want %s", c.name, c.cmd, d.Action, d.Reason, c.want)
		}
	}
}
