//go:build unix

package procgroup_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/procgroup"
)

// The test binary doubles as the processes the tests need, chosen by
// PROCGROUP_TEST_ROLE:
//
//	sleeper   writes its pid to $PIDFILE, ignores SIGTERM, sleeps
//	family    starts a sleeper in its group ($DIR/helper.pid) and one that
//	          calls setsid ($DIR/setsid.pid), waits for their pids, then
//	          writes $DIR/family.pid and sleeps (or exits with EXIT=1)
//	owner     plays a router: starts a family through the launcher, writes
//	          $DIR/owner.pid, sleeps; NOWATCHDOG=1 runs it without the
//	          watchdog
func TestMain(m *testing.M) {
	switch os.Getenv("PROCGROUP_TEST_ROLE") {
	case "sleeper":
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
		writePid(os.Getenv("PIDFILE"))
		select {}
	case "family":
		dir := os.Getenv("DIR")
		spawn("sleeper", filepath.Join(dir, "helper.pid"), false)
		spawn("sleeper", filepath.Join(dir, "setsid.pid"), true)
		// The helpers are up (their pids written) before the family says
		// it is, and before it exits with EXIT=1.
		for _, f := range []string{"helper.pid", "setsid.pid"} {
			for {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		writePid(filepath.Join(dir, "family.pid"))
		if os.Getenv("EXIT") == "1" {
			os.Exit(0)
		}
		select {}
	case "owner":
		if os.Getenv("NOWATCHDOG") == "1" {
			procgroup.DisableWatchdog()
		}
		cmd := procgroup.Command(context.Background(), procgroup.Spec{Path: os.Args[0],
			Env: procgroup.Env{Parent: config.ProcessEnv(), Inherit: true, Set: map[string]string{"PROCGROUP_TEST_ROLE": "family"}}})
		if err := cmd.Start(); err != nil {
			panic(err)
		}
		writePid(filepath.Join(os.Getenv("DIR"), "owner.pid"))
		select {}
	}
	os.Exit(m.Run())
}

func writePid(path string) {
	if err := os.WriteFile(path+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		panic(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		panic(err)
	}
}

// spawn starts this binary in a role with plain os/exec, as a child's
// helper would be started.
func spawn(role, pidfile string, setsid bool) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PROCGROUP_TEST_ROLE="+role, "PIDFILE="+pidfile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	if err := cmd.Start(); err != nil {
		panic(err)
	}
}

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

// readPid waits for a pid file and returns the pid.
func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waitFor(t, filepath.Base(path), func() bool {
		b, err := os.ReadFile(path)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

// waitGone waits until none of pids is alive.
func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	waitFor(t, what, func() bool {
		for _, p := range pids {
			if procgroup.Alive(p) {
				return false
			}
		}
		return true
	})
}

// family starts the family role through the launcher.
func family(t *testing.T, ctx context.Context, exit bool) (*procgroup.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	set := map[string]string{"PROCGROUP_TEST_ROLE": "family", "DIR": dir}
	if exit {
		set["EXIT"] = "1"
	}
	cmd := procgroup.Command(ctx, procgroup.Spec{Path: os.Args[0], Grace: 200 * time.Millisecond,
		Env: procgroup.Env{Parent: config.ProcessEnv(), Inherit: true, Set: set}})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cmd.Kill)
	return cmd, dir
}

func TestLeaderExitTakesItsHelpersAlongEvenAfterSetsid(t *testing.T) {
	leaderExitTakesHelpers(t)
}

func leaderExitTakesHelpers(t *testing.T) {
	cmd, dir := family(t, context.Background(), true)
	helper, escaped := readPid(t, filepath.Join(dir, "helper.pid")), readPid(t, filepath.Join(dir, "setsid.pid"))
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the leader exited cleanly: %v", err)
	}
	waitGone(t, "the helpers of a cleanly exited leader to be gone", helper, escaped)
}

// A process of a group of its own that the caller waits for is not
// taken by the router's orphan reaper, however late its Wait comes.
func TestAProcessStartedOwnIsLeftToItsWait(t *testing.T) {
	// A procgroup start makes this process a reaping subreaper.
	leader := procgroup.Command(context.Background(), procgroup.Spec{Path: "true"})
	if err := leader.Run(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	waited, err := procgroup.StartOwn(cmd)
	if err != nil {
		t.Fatal(err)
	}
	// Its exit's SIGCHLD reaches the reaper long before this Wait.
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the wait of a process started own: %v", err)
	}
	waited()
}

func TestCancelKillsTheWholeTree(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd, dir := family(t, ctx, false)
	leader := readPid(t, filepath.Join(dir, "family.pid"))
	helper, escaped := readPid(t, filepath.Join(dir, "helper.pid")), readPid(t, filepath.Join(dir, "setsid.pid"))
	if !procgroup.Alive(leader) || !procgroup.Alive(helper) || !procgroup.Alive(escaped) || !procgroup.GroupAlive(leader) {
		t.Fatal("the family should be alive before the cancel")
	}
	cancel()
	_ = cmd.Wait()
	waitGone(t, "the cancelled tree to be gone", leader, helper, escaped)
}

func TestStopEscalatesFromTermToKill(t *testing.T) {
	// The family's helpers ignore SIGTERM; so does this leader's shell.
	dir := t.TempDir()
	cmd := procgroup.Command(context.Background(), procgroup.Spec{Path: "sh",
		Args:  []string{"-c", `trap "" TERM; echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; while :; do sleep 1; done`, filepath.Join(dir, "sh.pid")},
		Env:   procgroup.Env{Parent: config.ProcessEnv()},
		Grace: 100 * time.Millisecond})
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := readPid(t, filepath.Join(dir, "sh.pid"))
	cmd.Stop()
	if !cmd.Exited() {
		t.Fatal("Stop returned with the process still running")
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("a process ignoring stdin EOF and SIGTERM ends by SIGKILL, got %v", cmd.ProcessState)
	}
	waitGone(t, "the shell", pid)
}

func TestEnvPolicy(t *testing.T) {
	parent := config.NewEnv(map[string]string{"PATH": "/bin", "HOME": "/h", "GOPATH": "/go", "OTHER_SERVER_TOKEN": "secret"})
	got := strings.Join(procgroup.Env{Parent: parent, Set: map[string]string{"OWN": "1", "HOME": "/mine"}}.List(), " ")
	if got != "HOME=/mine OWN=1 PATH=/bin" {
		t.Errorf("base allowlist = %q", got)
	}
	got = strings.Join(procgroup.Env{Parent: parent, Toolchain: true}.List(), " ")
	if got != "GOPATH=/go HOME=/h PATH=/bin" {
		t.Errorf("with the toolchain = %q", got)
	}
	got = strings.Join(procgroup.Env{Parent: parent, Inherit: true}.List(), " ")
	if !strings.Contains(got, "OTHER_SERVER_TOKEN=secret") {
		t.Errorf("inherit passes everything: %q", got)
	}
}

// owner runs the owner role and returns the pids of its family.
func owner(t *testing.T, watchdog bool) (ownerCmd *exec.Cmd, owner, leader, helper, escaped int) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal and the watchdog are Linux's")
	}
	dir := t.TempDir()
	ownerCmd = exec.Command(os.Args[0])
	ownerCmd.Env = append(os.Environ(), "PROCGROUP_TEST_ROLE=owner", "DIR="+dir)
	if !watchdog {
		ownerCmd.Env = append(ownerCmd.Env, "NOWATCHDOG=1")
	}
	if err := ownerCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ownerCmd.Process.Kill()
		_ = ownerCmd.Wait()
		for _, p := range []int{leader, helper, escaped} {
			if p > 0 {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
	})
	owner = readPid(t, filepath.Join(dir, "owner.pid"))
	leader = readPid(t, filepath.Join(dir, "family.pid"))
	helper, escaped = readPid(t, filepath.Join(dir, "helper.pid")), readPid(t, filepath.Join(dir, "setsid.pid"))
	return
}

func TestSIGKILLOfOwnerLeavesNoDescendant(t *testing.T) {
	cmd, _, leader, helper, escaped := owner(t, true)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, fmt.Sprintf("the child %d, its helper %d and its setsid helper %d", leader, helper, escaped), leader, helper, escaped)
}

func TestParentDeathSignalAloneEndsTheDirectChild(t *testing.T) {
	cmd, _, leader, _, _ := owner(t, false)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, "the owner's direct child", leader)
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

// BenchmarkRunTrue is the launcher's cost per short command: start, wait,
// and the tree sweep (a /proc walk on Linux) after the exit.
func BenchmarkRunTrue(b *testing.B) {
	env := procgroup.Env{Parent: config.ProcessEnv()}
	for b.Loop() {
		if err := procgroup.Command(context.Background(), procgroup.Spec{Path: "true", Env: env}).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunTruePlainExec is the same command through os/exec alone.
func BenchmarkRunTruePlainExec(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
