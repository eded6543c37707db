//go:build unix

package nav_test

import (
	"encoding/json"
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
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	dir := t.TempDir()
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
func sparse(t *testing.T, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "huge.bin")
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
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	p := sparse(t, 200<<20)
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
	big := sparse(t, 8<<30)
	for _, tool := range []string{"nav_get_map", "nav_read_anchor"} {
		want := "Cannot read " + big + ": the file is larger than 256 MiB"
		if text, isErr := routertest.CallText(t, cs, tool, map[string]any{"path": big, "anchor_id": "a"}); !isErr || text != want {
			t.Errorf("%s on 8 GiB = %v %q", tool, isErr, text)
		}
	}
}

func TestReadAnchorShowsALongLineCut(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	p := filepath.Join(t.TempDir(), "long.txt")
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
