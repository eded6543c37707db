//go:build unix

package vet_test

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/vet"
)

// vet --live tells each child's boot as it ends, not when the slowest is
// done: the gated child cannot finish booting until the test has been told
// of the fast one (its command waits on a FIFO the test writes only then),
// so it connects only if the fast child's outcome came first. Were the
// outcomes told at the end, the gated child would wait out its boot
// timeout and fail.
func TestLiveTellsEachBootAsItEnds(t *testing.T) {
	fx := testutil.FixtureServer(t)
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	path := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fast":  map[string]any{"command": fx},
		"gated": map[string]any{"command": "/bin/sh", "args": []string{"-c", `read go < "$0"; exec "$1"`, gate, fx}},
	}})
	var mu sync.Mutex
	var told []proxy.ServerStatus
	booted := func(st proxy.ServerStatus) {
		mu.Lock()
		told = append(told, st)
		mu.Unlock()
		if st.ID == "fast" {
			go func() {
				f, err := os.OpenFile(gate, os.O_WRONLY, 0)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = f.WriteString("go\n")
				f.Close()
			}()
		}
	}
	children := config.ChildTimeouts{Boot: 60 * time.Second, Request: 30 * time.Second, ShutdownGrace: time.Second}
	ds := vet.Run(vet.Options{ConfigPath: path, PermissionsPath: filepath.Join(dir, "permissions.yml"),
		Env: fixedEnv(map[string]string{"PATH": os.Getenv("PATH")}), Live: true, Home: filepath.Join(dir, "home"), Children: children, Booted: booted})
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 2 || told[0].ID != "fast" || told[1].ID != "gated" {
		t.Fatalf("told %+v, want fast then gated", told)
	}
	for _, st := range told {
		if st.Status != proxy.StatusConnected || st.RegisteredToolCount == 0 {
			t.Errorf("%s: %+v\n%s", st.ID, st, dump(ds))
		}
	}
	if ds.HasErrors() {
		t.Errorf("vet:\n%s", dump(ds))
	}
}
