package hooks

import (
	"bufio"
	"os"
	"strings"
	"testing"
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
		got := judge(rules, tool, in, "/home/dev", "/home/dev/project")
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
