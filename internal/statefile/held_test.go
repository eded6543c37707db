package statefile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/evokore/evokore/internal/statefile"
)

// Appends to a file kept open land at its path whatever happened to the
// file between them: rotated (renamed), removed, or replaced; and
// concurrent appends never interleave or lose a line.
func TestAppendsFollowTheFileAtItsPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.jsonl")
	t.Cleanup(statefile.CloseHeld)
	read := func(p string) string {
		b, _ := os.ReadFile(p)
		return string(b)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(statefile.AppendLines(path, []byte("1\n")))
	must(os.Rename(path, path+".1"))
	must(statefile.AppendLines(path, []byte("2\n")))
	if read(path+".1") != "1\n" || read(path) != "2\n" {
		t.Errorf("after a rotation: %q then %q", read(path+".1"), read(path))
	}
	must(os.Remove(path))
	must(statefile.AppendLines(path, []byte("3\n")))
	if read(path) != "3\n" {
		t.Errorf("after a removal: %q", read(path))
	}
	must(os.WriteFile(path+".new", []byte("x\n"), 0o600))
	must(os.Rename(path+".new", path))
	must(statefile.AppendLines(path, []byte("4\n")))
	if read(path) != "x\n4\n" {
		t.Errorf("after a replacement: %q", read(path))
	}

	// Many writers, more files than are kept open.
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				p := filepath.Join(dir, fmt.Sprintf("f%02d", (w*200+i)%40))
				if err := statefile.AppendLines(p, []byte("0123456789\n")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for i := range 40 {
		b := read(filepath.Join(dir, fmt.Sprintf("f%02d", i)))
		for len(b) > 0 {
			if len(b) < 11 || b[:11] != "0123456789\n" {
				t.Fatalf("f%02d holds an interleaved line: %q", i, b)
			}
			b = b[11:]
			total++
		}
	}
	if total != 1600 {
		t.Errorf("%d lines written, 1600 sent", total)
	}
}
