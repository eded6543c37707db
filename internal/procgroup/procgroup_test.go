//go:build unix

package procgroup_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/procgroup"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestKillEndsTheWholeGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	cmd := exec.Command("sh", "-c", `sleep 300 & echo $! > "$1"; wait`, "sh", pidFile)
	procgroup.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	var grandchild int
	waitFor(t, "the grandchild's pid", func() bool {
		b, err := os.ReadFile(pidFile)
		grandchild, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && grandchild > 0
	})
	leader := cmd.Process.Pid
	if !procgroup.Alive(leader) || !procgroup.Alive(grandchild) || !procgroup.GroupAlive(leader) {
		t.Fatal("processes should be alive before the kill")
	}
	procgroup.Kill(leader)
	<-done
	waitFor(t, "the group to be gone", func() bool {
		return !procgroup.Alive(leader) && !procgroup.Alive(grandchild)
	})
}

func TestUnreapedChildCountsAsDead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("zombies are told apart through /proc, which only Linux has")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Nobody waits: the exited child stays a zombie until Wait below.
	waitFor(t, "the exited child to count as dead", func() bool { return !procgroup.Alive(pid) })
	_ = cmd.Wait()
	if procgroup.Alive(0) || procgroup.Alive(-1) {
		t.Error("non-positive pids are never alive")
	}
	if !procgroup.Alive(os.Getpid()) {
		t.Error("this process is alive")
	}
}
