//go:build unix

package nav_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/evokore/evokore/internal/native/nav"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

func TestNavGivesOneAnswerForEveryFileItWillNotRead(t *testing.T) {
	h, cs := project(t, nil)
	dir := h.Dir
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(dir, "private.txt")
	if err := os.WriteFile(private, []byte("// @AI:NAV[SEC:s] secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(private, 0); err != nil {
		t.Fatal(err)
	}
	toProc := filepath.Join(dir, "environ")
	if err := os.Symlink("/proc/self/environ", toProc); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		filepath.Join(dir, "missing.txt"), dir, fifo, private, toProc,
		"/dev/zero", "/dev/stdin", "/proc/self/fd/0", "/proc/self/fd/1", "/proc/self/environ",
	}
	if _, err := os.Stat("/etc/shadow"); err == nil {
		paths = append(paths, "/etc/shadow")
	}
	for _, p := range paths {
		want := "File not found or not readable: " + p
		if text, isErr := routertest.CallText(t, cs, "nav_get_map", map[string]any{"path": p}); !isErr || text != want {
			t.Errorf("nav_get_map %s = %v %q\nwant %q", p, isErr, text, want)
		}
		if text, isErr := routertest.CallText(t, cs, "nav_read_anchor", map[string]any{"path": p, "anchor_id": "s"}); !isErr || text != want {
			t.Errorf("nav_read_anchor %s = %v %q\nwant %q", p, isErr, text, want)
		}
	}
}

// sparse makes a file of size bytes without a single newline, without
// using the disk space.
func sparse(t *testing.T, dir string, size int64) string {
	t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("huge-%d.bin", size))
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNavMemoryStaysBoundedOnAFileWithoutNewlines(t *testing.T) {
	h, cs := project(t, nil)
	p := sparse(t, h.Dir, 200<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	text, isErr := routertest.CallText(t, cs, "nav_get_map", map[string]any{"path": p})
	runtime.ReadMemStats(&after)
	var m nav.Map
	if err := json.Unmarshal([]byte(text), &m); isErr || err != nil || m.TotalLines != 1 || m.AnchorCount != 0 {
		t.Fatalf("map of a 200 MiB line = %v %.200s", isErr, text)
	}
	t.Logf("allocated %d KiB", (after.TotalAlloc-before.TotalAlloc)>>10)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("mapping a 200 MiB line allocated %d MiB", grew>>20)
	}

	// Past the file cap the tools stop reading and say so.
	big := sparse(t, h.Dir, 8<<30)
	for _, tool := range []string{"nav_get_map", "nav_read_anchor"} {
		want := "Cannot read " + big + ": the file is larger than 256 MiB"
		if text, isErr := routertest.CallText(t, cs, tool, map[string]any{"path": big, "anchor_id": "a"}); !isErr || text != want {
			t.Errorf("%s on 8 GiB = %v %q", tool, isErr, text)
		}
	}
}

func TestReadAnchorShowsALongLineCut(t *testing.T) {
	h, cs := project(t, nil)
	p := filepath.Join(h.Dir, "long.txt")
	if err := os.WriteFile(p, []byte(strings.Repeat("é", 100_000)+"\n// @AI:NAV[INS:here] spot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text, isErr := routertest.CallText(t, cs, "nav_read_anchor", map[string]any{"path": p, "anchor_id": "here", "lines_before": 1, "lines_after": 0})
	var w nav.Window
	_ = json.Unmarshal([]byte(text), &w)
	want := "1:\t" + strings.Repeat("é", nav.MaxLineBytes/2) + " …[line cut]\n2:\t// @AI:NAV[INS:here] spot"
	if isErr || w.Content != want {
		t.Errorf("window = %v %.300s", isErr, text)
	}
}

// The tools read the project's files only: a file outside it, one behind
// a link that leads out of it, and EVOKORE_HOME's records (other
// tenants', shared stores) inside it are answered exactly like a missing
// file, so a read-only caller learns neither their size nor that they
// exist.
func TestNavReadsOnlyTheProjectDirectory(t *testing.T) {
	h, cs := project(t, map[string]string{"EVOKORE_ROLE": "readonly"})
	anchored := []byte("one\n// @AI:NAV[SEC:s] secret section\nsecret\n// @AI:NAV[END:s]\n")
	outside := filepath.Join(t.TempDir(), "outside.go")
	if err := os.WriteFile(outside, anchored, 0o644); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(h.Settings.Home, "sessions", "record.jsonl")
	if err := os.MkdirAll(filepath.Dir(record), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(record, anchored, 0o644); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(h.Dir, "inside.go")
	if err := os.WriteFile(inside, anchored, 0o644); err != nil {
		t.Fatal(err)
	}
	link := func(name, target string) string {
		p := filepath.Join(h.Dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	refused := []string{
		"/etc/passwd", outside,
		link("passwd", "/etc/passwd"),
		link("out.go", outside),
		filepath.Join(link("outdir", filepath.Dir(outside)), "outside.go"),
		filepath.Join(h.Dir, "..", filepath.Base(filepath.Dir(outside)), "outside.go"),
		record,
		filepath.Join(h.Dir, "missing.go"),
	}
	for _, p := range refused {
		want := "File not found or not readable: " + p
		if text, isErr := routertest.CallText(t, cs, "nav_get_map", map[string]any{"path": p}); !isErr || text != want {
			t.Errorf("nav_get_map %s = %v %q\nwant %q", p, isErr, text, want)
		}
		if text, isErr := routertest.CallText(t, cs, "nav_read_anchor", map[string]any{"path": p, "anchor_id": "s"}); !isErr || text != want {
			t.Errorf("nav_read_anchor %s = %v %q\nwant %q", p, isErr, text, want)
		}
	}
	// A link that stays inside the project is followed.
	for _, p := range []string{inside, link("alias.go", inside)} {
		text, isErr := routertest.CallText(t, cs, "nav_get_map", map[string]any{"path": p})
		var m nav.Map
		if err := json.Unmarshal([]byte(text), &m); isErr || err != nil || m.TotalLines != 4 || m.File != p {
			t.Errorf("nav_get_map %s = %v %s", p, isErr, text)
		}
	}
}
