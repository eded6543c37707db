package audit_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/evokore/evokore/internal/audit"
	"github.com/evokore/evokore/internal/events"
)

// Concurrent logs (two routers) share one file: every line is whole JSON,
// the file rotates by size, only Keep rotated files remain, and the lines
// kept are the newest.
func TestConcurrentWritersRotateAndKeepN(t *testing.T) {
	path := audit.Path(t.TempDir())
	const perLog, logs = 2000, 2
	var wg sync.WaitGroup
	for w := range logs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := audit.Open(audit.Options{Path: path, MaxBytes: 8 << 10, Keep: 3})
			for i := range perLog {
				l.Handle(events.Event{Type: events.ToolCall, Tool: fmt.Sprintf("w%d_%04d", w, i), Outcome: "ok"})
			}
			l.Close()
			if d := l.Dropped(); d != 0 {
				t.Errorf("writer %d dropped %d", w, d)
			}
		}()
	}
	wg.Wait()
	files, _ := filepath.Glob(path + "*")
	var logsFound []string
	total := 0
	for _, f := range files {
		if filepath.Ext(f) == ".lock" {
			continue
		}
		logsFound = append(logsFound, filepath.Base(f))
		st, _ := os.Stat(f)
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", f, st.Mode())
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var e events.Event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Type != events.ToolCall {
				t.Fatalf("%s: bad line %q: %v", f, sc.Text(), err)
			}
			total++
		}
		fh.Close()
	}
	if len(logsFound) != 4 {
		t.Errorf("files = %v, want audit.jsonl and 3 rotated", logsFound)
	}
	if total == 0 || total >= perLog*logs {
		t.Errorf("%d lines kept of %d: rotation dropped nothing or everything", total, perLog*logs)
	}
	// The newest lines are in the live file.
	b, _ := os.ReadFile(path)
	if len(b) == 0 {
		t.Error("the live file is empty")
	}
}

// A batch of big events is written in parts: every event is there, in
// order, on a line of its own, and nothing is counted as dropped.
func TestBigEventsAreWrittenWholeAndInOrder(t *testing.T) {
	path := audit.Path(t.TempDir())
	l := audit.Open(audit.Options{Path: path})
	const n = 600
	detail := strings.Repeat("x", 3000)
	for i := range n {
		l.Handle(events.Event{Type: events.ToolCall, Tool: fmt.Sprintf("t%04d", i), Detail: detail})
	}
	l.Close()
	if d := l.Dropped(); d != 0 {
		t.Errorf("dropped %d", d)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	for i, line := range lines {
		var e events.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Tool != fmt.Sprintf("t%04d", i) || e.Detail != detail {
			t.Fatalf("line %d: %.80s: %v", i, line, err)
		}
	}
}
