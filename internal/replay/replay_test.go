package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSafeIDCannotLeaveTheSessionsDirectory(t *testing.T) {
	home := t.TempDir()
	for _, id := range []string{"../../etc/passwd", "..", "/abs/path", `a\b`, "x/../../y", "", strings.Repeat("a", 1000), "ok-id_1"} {
		p := Path(home, id)
		if filepath.Dir(p) != SessionsDir(home) {
			t.Errorf("SafeID(%q) gives %s, outside %s", id, p, SessionsDir(home))
		}
		if s := SafeID(id); strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" || len(s) > MaxIDLen || s == "" {
			t.Errorf("SafeID(%q) = %q", id, s)
		}
	}
	if SafeID("ok-id_1") != "ok-id_1" {
		t.Error("a clean id must be kept as it is")
	}
}

func TestConcurrentAppendsKeepEveryLineWhole(t *testing.T) {
	home := t.TempDir()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if err := Append(home, "s1", Entry{Tool: "Bash", Summary: fmt.Sprintf("w%d-%d %s", w, i, strings.Repeat("x", 500))}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	f, err := os.Open(Path(home, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d is not an entry: %v", n+1, err)
		}
		if len([]rune(e.Summary)) > MaxSummary || e.Outcome != OutcomeOK || e.TS == "" {
			t.Fatalf("entry not bounded or filled: %+v", e)
		}
		n++
	}
	if n != 400 {
		t.Fatalf("%d lines, want 400", n)
	}
}

func TestTruncateCountsCharacters(t *testing.T) {
	if got := Truncate("héllo wörld", 5); got != "héllo" {
		t.Fatalf("got %q", got)
	}
	if got := Truncate("ab\xffcd", 10); got != "ab\uFFFDcd" {
		t.Fatalf("got %q", got)
	}
}

func TestPruneKeepsTheNewestWithinAge(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	touch := func(name string, age time.Duration) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		when := now.Add(-age)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 110 {
		touch(fmt.Sprintf("s%03d-replay.jsonl", i), time.Duration(i)*time.Minute)
	}
	touch("old-evidence.jsonl", 31*24*time.Hour)
	touch("old.jsonl", 90*24*time.Hour) // a manifest: never pruned
	n, err := Prune(dir, MaxAge, MaxFiles, now)
	if err != nil {
		t.Fatal(err)
	}
	if n != 11 {
		t.Fatalf("removed %d, want 11", n)
	}
	for _, name := range []string{"s000-replay.jsonl", "s099-replay.jsonl", "old.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s should be kept: %v", name, err)
		}
	}
	for _, name := range []string{"s100-replay.jsonl", "s109-replay.jsonl", "old-evidence.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s should be pruned", name)
		}
	}
}

func TestAppendRotatingKeepsThreeGenerations(t *testing.T) {
	p := filepath.Join(t.TempDir(), "logs", "hooks.jsonl")
	line := []byte(strings.Repeat("y", 99))
	for range 50 {
		if err := AppendRotating(p, line, 1000, 3); err != nil {
			t.Fatal(err)
		}
	}
	for _, suffix := range []string{"", ".1", ".2", ".3"} {
		info, err := os.Stat(p + suffix)
		if err != nil {
			t.Fatalf("%s missing: %v", suffix, err)
		}
		if info.Size() > 1000 {
			t.Errorf("%s is %d bytes, over the limit", suffix, info.Size())
		}
	}
	if _, err := os.Stat(p + ".4"); err == nil {
		t.Error("a fourth generation was kept")
	}
	// A directory removed under a running router is made again.
	if err := os.RemoveAll(filepath.Dir(p)); err != nil {
		t.Fatal(err)
	}
	if err := AppendRotating(p, line, 1000, 3); err != nil {
		t.Fatalf("append after the directory was removed: %v", err)
	}
	if got, err := os.ReadFile(p); err != nil || len(got) != len(line)+1 {
		t.Fatalf("after the directory was removed the log holds %q, %v", got, err)
	}
}

func TestSummarizeNeverIncludesSecretValues(t *testing.T) {
	if got := Summarize(map[string]any{"command": "go test ./..."}); got != "go test ./..." {
		t.Fatalf("got %q", got)
	}
	got := Summarize(map[string]any{"api_key": "sk-live-123", "limit": 5.0, "x": map[string]any{}})
	if strings.Contains(got, "sk-live") || got != "api_key limit=5 x" {
		t.Fatalf("got %q", got)
	}
}
