package proxy_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// legacy lists proxied tools, so they can be called by name.
var legacy = map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"}

func with(base map[string]string, extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// readPid waits for a pid file the fixture writes atomically.
func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	routertest.WaitFor(t, filepath.Base(path), func() bool {
		b, err := os.ReadFile(path)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

func TestChildEnvironmentIsTheBaseAllowlistUnlessInherited(t *testing.T) {
	plain := routertest.Fixture(t)
	plain["env"] = map[string]string{"OWN_SETTING": "mine"}
	inherit := routertest.Fixture(t)
	inherit["inheritEnv"] = true
	h := routertest.New(t, map[string]any{"plain": plain, "inherit": inherit},
		with(legacy, map[string]string{"ROUTER_ONLY_SECRET": "s3cr3t", "LANG": "C.UTF-8"}))
	cs := h.Connect(nil)
	h.Booted()
	for _, c := range []struct{ tool, name, want string }{
		{"plain_env", "ROUTER_ONLY_SECRET", "ROUTER_ONLY_SECRET is unset"},
		{"plain_env", "OWN_SETTING", "OWN_SETTING=mine"},
		{"plain_env", "LANG", "LANG=C.UTF-8"},
		{"inherit_env", "ROUTER_ONLY_SECRET", "ROUTER_ONLY_SECRET=s3cr3t"},
		{"inherit_env", "OWN_SETTING", "OWN_SETTING is unset"},
	} {
		if got, _ := routertest.CallText(t, cs, c.tool, map[string]any{"name": c.name}); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.tool, c.name, got, c.want)
		}
	}
}

func TestBannerAndStrayStdoutLinesAreSkipped(t *testing.T) {
	h := routertest.New(t, map[string]any{"chatty": routertest.Fixture(t, "-banner", "chatty server v1 ready")}, legacy)
	cs := h.Connect(nil)
	h.Booted()
	if got := routertest.StatusOf(t, cs, "chatty"); got != "connected" {
		t.Fatalf("a server printing a banner first must connect, status %s:\n%s", got, h.Stderr.String())
	}
	if got, _ := routertest.CallText(t, cs, "chatty_garbage", map[string]any{"message": "oops, a print() left in"}); !strings.Contains(got, "wrote") {
		t.Fatalf("garbage = %q", got)
	}
	// The same session still answers: the stray line did not end it.
	if got, isErr := routertest.CallText(t, cs, "chatty_echo", map[string]any{"message": "still here"}); isErr || got != "Echo: still here" {
		t.Fatalf("after a stray stdout line: %q (isError %v)\n%s", got, isErr, h.Stderr.String())
	}
	log := h.Stderr.String()
	for _, want := range []string{
		"[chatty] skipped a line on stdout that is not JSON-RPC: chatty server v1 ready",
		"[chatty] skipped a line on stdout that is not JSON-RPC: oops, a print() left in",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
	if st := routertest.Status(t, cs); st.Servers[0].ErrorCount != 0 {
		t.Errorf("no error should be counted: %+v", st.Servers[0])
	}
}

func TestAMegabyteStderrLineDoesNotStopDraining(t *testing.T) {
	h := routertest.New(t, map[string]any{"loud": routertest.Fixture(t, "-stderr-bytes", strconv.Itoa(3<<20))}, legacy)
	cs := h.Connect(nil)
	h.Booted()
	if got := routertest.StatusOf(t, cs, "loud"); got != "connected" {
		t.Fatalf("status %s", got)
	}
	// Far more than a pipe holds: if stderr were no longer drained, the
	// child would block writing it and never answer.
	big := strings.Repeat("y", 200<<10)
	for i := range 3 {
		if got, isErr := routertest.CallText(t, cs, "loud_stderr", map[string]any{"message": big}); isErr || !strings.HasPrefix(got, "wrote") {
			t.Fatalf("stderr call %d: isError %v", i, isErr)
		}
	}
	routertest.WaitFor(t, "the line after the long one to be forwarded", func() bool {
		return strings.Contains(h.Stderr.String(), "[loud] after the long line\n")
	})
	log := h.Stderr.String()
	if !strings.Contains(log, "[loud] xxxx") || !strings.Contains(log, " more bytes]\n") {
		t.Errorf("the long line is forwarded truncated, with a note")
	}
	for _, line := range strings.Split(log, "\n") {
		if len(line) > 64<<10 {
			t.Fatalf("a forwarded line of %d bytes: long lines must be truncated", len(line))
		}
	}
}

func TestShutdownEscalatesToSIGKILL(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "stubborn.pid")
	h := routertest.New(t, map[string]any{"stubborn": routertest.Fixture(t, "-ignore-eof", "-ignore-term", "-pidfile", pidfile)}, legacy)
	cs := h.Connect(nil)
	h.Booted()
	if got := routertest.StatusOf(t, cs, "stubborn"); got != "connected" {
		t.Fatalf("status %s", got)
	}
	pid := readPid(t, pidfile)
	// The harness's grace is 500 ms: stdin closed, then SIGTERM (ignored),
	// then SIGKILL.
	h.Server.Close()
	routertest.WaitGone(t, 10*time.Second, pid)
}

func TestStoppedChildLeavesNoHelperBehind(t *testing.T) {
	dir := t.TempDir()
	h := routertest.New(t, map[string]any{
		"group":  routertest.Fixture(t, "-grandchild", filepath.Join(dir, "group.pid")),
		"setsid": routertest.Fixture(t, "-grandchild", filepath.Join(dir, "setsid.pid"), "-setsid"),
	}, legacy)
	h.Connect(nil)
	h.Booted()
	helpers := []int{readPid(t, filepath.Join(dir, "group.pid")), readPid(t, filepath.Join(dir, "setsid.pid"))}
	for _, p := range helpers {
		if !procgroup.Alive(p) {
			t.Fatalf("helper %d should run while its child does", p)
		}
	}
	// The children exit cleanly on stdin EOF; their helpers must go too.
	h.Server.Close()
	routertest.WaitGone(t, 10*time.Second, helpers...)
}
