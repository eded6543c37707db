//go:build unix

package analytics_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

func TestContextHealthReadsOnlyRegularFiles(t *testing.T) {
	cs, h := harness(t, nil)
	dir := transcripts(t, h)
	fifo := filepath.Join(dir, "session.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// Outside the transcripts folder, so refused whatever the router's
	// privileges.
	private := filepath.Join(t.TempDir(), "private.jsonl")
	if err := os.WriteFile(private, nil, 0); err != nil {
		t.Fatal(err)
	}
	paths := []string{fifo, private, dir, "/dev/zero", "/dev/stdin", "/proc/self/fd/0", "/proc/self/fd/1", "/proc/self/environ"}
	if _, err := os.Stat("/etc/shadow"); err == nil {
		paths = append(paths, "/etc/shadow")
	}
	for _, p := range paths {
		want := "Session file not found or not readable: " + p
		if text, isErr := routertest.CallText(t, cs, "session_context_health", map[string]any{"session_path": p}); !isErr || text != want {
			t.Errorf("%s = %v %q\nwant %q", p, isErr, text, want)
		}
	}
}

func TestContextHealthMemoryStaysBounded(t *testing.T) {
	cs, h := harness(t, nil)
	dir := transcripts(t, h)
	// A transcript whose first line is far longer than any record: it
	// is skipped, and the usage after it is still found.
	long := filepath.Join(dir, "long.jsonl")
	usage := `{"timestamp":"2026-01-01T00:00:00Z","message":{"usage":{"input_tokens":7,"output_tokens":3}}}`
	if err := os.WriteFile(long, []byte(`{"pad":"`+strings.Repeat("p", 12<<20)+`"}`+"\n"+usage+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text, isErr := routertest.CallText(t, cs, "session_context_health", map[string]any{"session_path": long})
	if v := decode(t, text); isErr || v["turn_count"] != 1.0 {
		t.Errorf("transcript with a 12 MiB line = %v %s", isErr, text)
	}

	// 300 MiB without a newline (sparse, so no disk is used).
	huge := filepath.Join(dir, "huge.jsonl")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(300 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	text, isErr = routertest.CallText(t, cs, "session_context_health", map[string]any{"session_path": huge})
	runtime.ReadMemStats(&after)
	if want := "No usage data found in session file: " + huge + ". It may be empty or not a Claude Code transcript."; !isErr || text != want {
		t.Errorf("300 MiB line = %v %q", isErr, text)
	}
	t.Logf("allocated %d KiB", (after.TotalAlloc-before.TotalAlloc)>>10)
	// Bounded by the 8 MiB line cap (and the growth of its buffer), not
	// by the file.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 128<<20 {
		t.Errorf("reading a 300 MiB line allocated %d MiB", grew>>20)
	}
}

// Only the user's transcripts are read: a transcript outside their
// folder, a link out of it, and the router's own records are answered
// exactly like a missing file, so the tool tells nothing of what exists.
func TestContextHealthReadsOnlyTheTranscriptsFolder(t *testing.T) {
	cs, h := harness(t, nil)
	valid := []byte(`{"timestamp":"2026-01-01T00:00:00Z","message":{"usage":{"input_tokens":7,"output_tokens":3}}}` + "\n")
	outside := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	if err := os.WriteFile(outside, valid, 0o644); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(transcripts(t, h), "inside.jsonl")
	if err := os.WriteFile(inside, valid, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(transcripts(t, h), "link.jsonl")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(h.Settings.Home, "sessions", "sess-old-replay.jsonl")
	for _, p := range []string{outside, link, record, "/etc/passwd", filepath.Join(filepath.Dir(outside), "missing.jsonl")} {
		want := "Session file not found or not readable: " + p
		if text, isErr := routertest.CallText(t, cs, "session_context_health", map[string]any{"session_path": p}); !isErr || text != want {
			t.Errorf("%s = %v %q\nwant %q", p, isErr, text, want)
		}
	}
	text, isErr := routertest.CallText(t, cs, "session_context_health", map[string]any{"session_path": inside})
	if v := decode(t, text); isErr || v["turn_count"] != 1.0 {
		t.Errorf("a transcript in the folder = %v %s", isErr, text)
	}
}
