package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// The real binary reloads on its own when mcp.config.json changes, and on
// SIGHUP; every reload applies the trust record as it is then, so a
// project's permissions.yml counts once trusted and stops counting when an
// edit lapses its trust, exactly as across a restart.
func TestReloadOnFileChangeAndSIGHUPInTheBinary(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	fx := testutil.FixtureServer(t)
	testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"one": map[string]any{"command": fx}}})
	// The project's own rules: ignored until trusted.
	testutil.WriteFile(t, dir, "permissions.yml", "rules:\n  one_echo: deny\n")

	cmd := exec.Command(testutil.Evokore(t), "serve")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + home, "EVOKORE_HOME=" + home, "EVOKORE_TOOL_DISCOVERY_MODE=legacy"}
	stderr := &routertest.Buffer{}
	cmd.Stderr = stderr
	var listChanged atomic.Int64
	client := mcp.NewClient(&mcp.Implementation{Name: "reload-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged.Add(1) },
	})
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	generation := func(n int) func() bool {
		return func() bool {
			return strings.Contains(stderr.String(), "Configuration reloaded (generation "+strconv.Itoa(n)+")")
		}
	}
	echo := func(message string) (string, bool) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "one_echo", Arguments: map[string]any{"message": message}})
		if err != nil {
			return err.Error(), true
		}
		return routertest.Text(res), res.IsError
	}
	routertest.WaitFor(t, "one_echo", func() bool { return slices.Contains(routertest.ToolNames(t, cs), "one_echo") })
	if text, isErr := echo("untrusted"); isErr {
		t.Fatalf("the untrusted project's deny was honoured: %q", text)
	}

	// An edit of mcp.config.json is picked up by the watcher: a child is
	// added and the session is told.
	before := listChanged.Load()
	cfg := map[string]any{"servers": map[string]any{"one": map[string]any{"command": fx}, "two": map[string]any{"command": fx}}}
	testutil.WriteJSON(t, dir, "mcp.config.json", cfg)
	routertest.WaitFor(t, "the watcher's reload", generation(2))
	routertest.WaitFor(t, "two_echo with list_changed", func() bool {
		return listChanged.Load() > before && slices.Contains(routertest.ToolNames(t, cs), "two_echo")
	})

	// Trusting the directory changes no watched file; SIGHUP reloads and
	// the project's rules now count.
	trust := exec.Command(testutil.Evokore(t), "trust")
	trust.Dir, trust.Env = dir, cmd.Env
	if out, err := trust.CombinedOutput(); err != nil {
		t.Fatalf("evokore trust: %v\n%s", err, out)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	routertest.WaitFor(t, "the SIGHUP reload", generation(3))
	if text, _ := echo("trusted"); !strings.Contains(text, policy.DeniedText("one_echo")) {
		t.Errorf("after trust and SIGHUP the project's deny does not hold: %q", text)
	}

	// Editing the trusted file lapses its trust: the reload reads the
	// user's rules instead, never the edited ones.
	testutil.WriteFile(t, dir, "permissions.yml", "rules:\n  one_echo: allow\n  one_pid: deny\n")
	routertest.WaitFor(t, "the reload after the edit", generation(4))
	if !strings.Contains(stderr.String()[strings.Index(stderr.String(), "(generation 3)"):], "Ignoring ./permissions.yml") {
		t.Errorf("the lapsed trust is not reported:\n%s", stderr)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "one_pid", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Errorf("the edited, untrusted permissions.yml was honoured: %v %q", err, routertest.Text(res))
	}

	// SIGHUP did not end the router, and a broken file is refused with
	// its position while the router keeps serving.
	testutil.WriteFile(t, dir, "mcp.config.json", "{\n  \"servers\": {\n    \"one\": {\"command\": 7}\n  }\n}\n")
	routertest.WaitFor(t, "the refusal", func() bool { return strings.Contains(stderr.String(), "mcp.config.json:3:") })
	if !strings.Contains(stderr.String(), "Reload refused") {
		t.Errorf("no refusal on stderr:\n%s", stderr)
	}
	if text, isErr := echo("still serving"); isErr || text != "Echo: still serving" {
		t.Errorf("after a refused reload: %q", text)
	}
	if _, err := os.Stat(filepath.Join(dir, "mcp.config.json")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "DATA RACE") {
		t.Errorf("the race detector reported a race:\n%s", stderr)
	}
}
