//go:build unix

package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	rt "github.com/evokore/evokore/internal/testutil/routertest"
)

// hostileFiles put something in place of a file evokore reads that would
// grow it without end (a device) or hang it (a FIFO), or a file past the
// cap; want is the refusal, positioned at the file.
var hostileFiles = []struct {
	name  string
	place func(t *testing.T, path string)
	want  string
}{
	{"a symlink to /dev/zero", func(t *testing.T, path string) {
		replace(t, path, func(tmp string) error { return os.Symlink("/dev/zero", tmp) })
	}, "error: not a regular file [read]"},
	{"a FIFO", func(t *testing.T, path string) {
		replace(t, path, func(tmp string) error { return syscall.Mkfifo(tmp, 0o600) })
	}, "error: not a regular file [read]"},
	{"a directory", func(t *testing.T, path string) {
		replace(t, path, func(tmp string) error { return os.Mkdir(tmp, 0o700) })
	}, "error: not a regular file [read]"},
	{"a file past the cap", func(t *testing.T, path string) {
		replace(t, path, func(tmp string) error { return os.WriteFile(tmp, make([]byte, 4<<20+1), 0o600) })
	}, "error: exceeds 4194304 bytes [read]"},
}

// replace puts what make creates in place of path.
func replace(t *testing.T, path string, make func(tmp string) error) {
	t.Helper()
	tmp := path + ".new"
	if err := make(tmp); err != nil {
		t.Fatal(err)
	}
	// A directory cannot be renamed over a file.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// restore puts good back at path, whatever is there now.
func restore(t *testing.T, path string, good []byte) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A reload (SIGHUP, the watcher) that finds mcp.config.json or
// permissions.yml replaced by a device, a FIFO, a directory or a huge file
// reads none of it: it is refused with the file's name and why, and the
// running configuration stays.
func TestReloadRefusesFilesThatAreNotRegularOrTooLarge(t *testing.T) {
	h := reloadHarness(t, map[string]any{"keep": rt.Fixture(t)}, "rules:\n  keep_echo: allow\n")
	cs := h.Connect(nil)
	h.Booted()
	keepPid := pidOf(t, cs, "keep_pid")
	for _, file := range []string{"mcp.config.json", "permissions.yml"} {
		path := filepath.Join(h.Dir, file)
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range hostileFiles {
			t.Run(file+"/"+c.name, func(t *testing.T) {
				c.place(t, path)
				t.Cleanup(func() { restore(t, path, good) })
				_, err := h.Server.Reload()
				if want := path + ": " + c.want; err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("reload: %v; want %q", err, want)
				}
				if got := pidOf(t, cs, "keep_pid"); got != keepPid {
					t.Errorf("the child was restarted by a refused reload: pid %d, was %d", got, keepPid)
				}
				if text, isErr := rt.CallText(t, cs, "keep_echo", map[string]any{"message": "still"}); isErr || text != "Echo: still" {
					t.Errorf("keep_echo after a refused reload: %q", text)
				}
			})
		}
	}
}

// At start, the same files are refused with the same words; the natives
// serve.
func TestStartRefusesAConfigThatIsNotARegularFile(t *testing.T) {
	for _, c := range hostileFiles {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "mcp.config.json")
			if err := os.WriteFile(path, []byte(`{"servers": {}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			c.place(t, path)
			h := rt.NewWithConfig(t, dir, path, nil)
			cs := h.Connect(nil)
			res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "evokore://server/status"})
			if err != nil {
				t.Fatal(err)
			}
			if want := path + ": " + c.want; !strings.Contains(h.Stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s\nstatus: %s", want, h.Stderr.String(), res.Contents[0].Text)
			}
			if text, isErr := rt.CallText(t, cs, "discover_tools", map[string]any{"query": "memory"}); isErr {
				t.Errorf("the natives do not serve: %s", text)
			}
		})
	}
}
