package skills

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitChanged waits for the library's next refresh.
func waitChanged(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no re-index after %s", what)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWatcherReindexesOnRealFileEvents(t *testing.T) {
	root := writeTree(t, map[string]string{"cat/first/SKILL.md": skillDoc("first", "The first skill.")})
	lib := Open(root, nil)
	defer lib.Close()
	if err := lib.Watch(50 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := lib.Watch(50 * time.Millisecond); err != nil {
		t.Fatal("watching twice must be a no-op:", err)
	}

	// A new file in a watched directory.
	ch := lib.Changed()
	write(t, filepath.Join(root, "cat", "second.md"), skillDoc("second", "Added while watching."))
	waitChanged(t, ch, "a new file")
	waitFor(t, "second indexed", func() bool { return lib.Index().ByName("second") != nil })

	// A new directory, then a skill inside it: the directory must be
	// watched as soon as it appears.
	ch2 := lib.Changed()
	if err := os.MkdirAll(filepath.Join(root, "newcat", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The directory's creation alone triggers a re-index; wait for it so
	// the watcher has added the directory before a file appears in it.
	waitChanged(t, ch2, "a new directory")
	write(t, filepath.Join(root, "newcat", "deep", "SKILL.md"), skillDoc("deep", "In a directory created after the watch started."))
	waitFor(t, "skill in a new directory", func() bool { return lib.Index().ByName("deep") != nil })

	// A malformed file is reported; the watcher and the other skills survive.
	write(t, filepath.Join(root, "cat", "broken.md"), "---\nname: broken\ntags: {a: 1}\n---\nbody\n")
	waitFor(t, "broken file reported", func() bool {
		for _, d := range lib.Index().Diagnostics {
			if strings.Contains(d.File, "broken.md") {
				return true
			}
		}
		return false
	})
	if lib.Index().ByName("first") == nil || lib.Index().ByName("broken") != nil {
		t.Fatal("a malformed file must be skipped without losing the others")
	}

	// Removal.
	if err := os.Remove(filepath.Join(root, "cat", "second.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "removed skill gone", func() bool { return lib.Index().ByName("second") == nil })

	// Still alive after all that.
	write(t, filepath.Join(root, "cat", "third.md"), skillDoc("third", "Still watching."))
	waitFor(t, "third indexed", func() bool { return lib.Index().ByName("third") != nil })
}

func TestWatchNeedsADirectory(t *testing.T) {
	lib := Open(filepath.Join(t.TempDir(), "missing"), nil)
	defer lib.Close()
	if lib.Index().Source.Dir != "" || lib.Index().Len() < 40 {
		t.Fatalf("a missing directory serves the starter library: %d skills from %q", lib.Index().Len(), lib.Index().Source.Dir)
	}
	if err := lib.Watch(time.Second); err == nil {
		t.Fatal("watching the embedded library must fail")
	}
	if _, err := lib.Writable(); err == nil {
		t.Fatal("the embedded library is not writable")
	}
}

func TestRefreshCountsAndSignals(t *testing.T) {
	root := writeTree(t, map[string]string{
		"c/a/SKILL.md": skillDoc("a", "A."),
		"c/b/SKILL.md": skillDoc("b", "B."),
	})
	lib := Open(root, nil)
	lib.Index() // the first index is built in the background: wait for it
	ch := lib.Changed()
	write(t, filepath.Join(root, "c", "c.md"), skillDoc("c", "C."))
	if err := os.RemoveAll(filepath.Join(root, "c", "a")); err != nil {
		t.Fatal(err)
	}
	r := lib.Refresh()
	if r.Added != 1 || r.Removed != 1 || r.Total != 2 || r.Kept != 1 {
		t.Fatalf("refresh %+v", r)
	}
	select {
	case <-ch:
	default:
		t.Fatal("Changed was not closed by Refresh")
	}
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
