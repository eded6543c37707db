//go:build unix

package memory_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/evokore/evokore/internal/native/memory"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// corruptions damage a real database file the way a crash, a full disk or
// a stray write would.
var corruptions = map[string]func(t *testing.T, path string){
	// The header page survives, the pages it points to are garbage.
	"garbage past the first pages": func(t *testing.T, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		page := os.Getpagesize()
		for i := 2 * page; i < len(b); i++ {
			b[i] = byte(i*7 + 13)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	},
	// Cut short: the b-trees name pages past the end of the file.
	"truncated": func(t *testing.T, path string) {
		if err := os.Truncate(path, int64(2*os.Getpagesize()+100)); err != nil {
			t.Fatal(err)
		}
	},
	"cut inside the first page": func(t *testing.T, path string) {
		if err := os.Truncate(path, 1000); err != nil {
			t.Fatal(err)
		}
	},
	"all garbage": func(t *testing.T, path string) {
		if err := os.WriteFile(path, []byte(strings.Repeat("not a database file ", 2000)), 0o600); err != nil {
			t.Fatal(err)
		}
	},
	"a FIFO in its place": func(t *testing.T, path string) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
	},
}

func TestACorruptDatabaseIsSetAsideAndMemoryGoesOn(t *testing.T) {
	for name, corrupt := range corruptions {
		t.Run(name, func(t *testing.T) {
			h := routertest.New(t, map[string]any{}, nil)
			cs := h.Connect(nil)
			for i := range 60 {
				args := map[string]any{"session_id": "s1", "key": fmt.Sprintf("k%03d", i), "kind": "knowledge", "value": strings.Repeat("v", 300), "tags": []string{"t"}}
				if text, isErr := routertest.CallText(t, cs, "memory_store", args); isErr {
					t.Fatal(text)
				}
			}
			path := memory.NewStore(filepath.Join(h.Dir, "home", "memory")).PathFor("s1")
			if fi, err := os.Stat(path); err != nil || fi.Size() < int64(3*os.Getpagesize()) {
				t.Fatalf("the database is too small to damage past its first pages: %v", err)
			}
			corrupt(t, path)

			text, isErr := routertest.CallText(t, cs, "memory_list", map[string]any{"session_id": "s1"})
			if !isErr || !strings.Contains(text, "memory database was corrupt") || !strings.Contains(text, path+".corrupt-") {
				t.Fatalf("memory_list on a corrupt database = %v %q", isErr, text)
			}
			t.Logf("answer: %s", text)
			aside, _ := filepath.Glob(path + ".corrupt-*")
			if len(aside) != 1 {
				t.Fatalf("set aside: %v", aside)
			}
			if _, err := os.Lstat(path); !os.IsNotExist(err) {
				t.Errorf("the corrupt file is still in place: %v", err)
			}
			if !strings.Contains(h.Stderr.String(), "[EVOKORE] Memory database is corrupt; moved it aside and starting a fresh one path="+path+" ") {
				t.Errorf("stderr does not report it:\n%s", h.Stderr.String())
			}

			// The store starts afresh.
			if text, isErr := routertest.CallText(t, cs, "memory_store", map[string]any{"session_id": "s1", "key": "after", "kind": "knowledge", "value": 1}); isErr {
				t.Fatalf("memory_store after = %s", text)
			}
			text, isErr = routertest.CallText(t, cs, "memory_list", map[string]any{"session_id": "s1"})
			if a := routertest.DecodeJSON[answer](t, text); isErr || a.Count != 1 || a.Entries[0].Key != "after" {
				t.Errorf("memory_list after = %v %s", isErr, text)
			}
		})
	}
}
