//go:build linux

package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// The router's own stdio, devices and FIFOs named as files: each call is
// refused at once with the same answer, and the session goes on.
func TestFileToolsCannotReadTheRoutersStdioOrBlock(t *testing.T) {
	r := startRouter(t)
	// FIFOs where the tools do read: the router's project directory (its
	// working directory) and the user's transcripts (HOME is r.dir).
	fifo := filepath.Join(r.dir, "fifo")
	transcripts := filepath.Join(r.dir, ".claude", "projects", "p")
	if err := os.MkdirAll(transcripts, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, filepath.Join(transcripts, "fifo.jsonl")} {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	calls := []struct {
		tool, arg, want string
	}{
		{"session_context_health", "session_path", "Session file not found or not readable: "},
		{"nav_get_map", "path", "File not found or not readable: "},
		{"nav_read_anchor", "path", "File not found or not readable: "},
	}
	for _, p := range []string{"/dev/stdin", "/proc/self/fd/0", "/proc/self/fd/1", "/dev/zero", fifo, filepath.Join(transcripts, "fifo.jsonl")} {
		for _, c := range calls {
			for range 5 {
				res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{c.arg: p, "anchor_id": "a"}})
				if err != nil {
					t.Fatalf("%s %s: %v\n%s", c.tool, p, err, r.stderr.String())
				}
				if got := routertest.Text(res); !res.IsError || got != c.want+p {
					t.Errorf("%s %s = %q", c.tool, p, got)
				}
			}
		}
	}
	if _, err := r.cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("the session did not survive: %v", err)
	}
}

// The project is the directory the client started the router in: a
// read-only caller maps a file there, and gets for /etc/passwd the answer
// a missing file gets, not its line count.
func TestNavReadsTheProjectTheRouterStartedIn(t *testing.T) {
	r := startRouter(t, "EVOKORE_ROLE=readonly")
	src := filepath.Join(r.dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n// @AI:NAV[INS:here] add code\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: "nav_get_map", Arguments: map[string]any{"path": src}})
	if err != nil || res.IsError || !strings.Contains(routertest.Text(res), `"anchor_count": 1`) {
		t.Fatalf("nav_get_map of a project file = %v %v", err, routertest.Text(res))
	}
	for _, p := range []string{"/etc/passwd", filepath.Join(r.dir, "missing.go")} {
		res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: "nav_get_map", Arguments: map[string]any{"path": p}})
		if err != nil || !res.IsError || routertest.Text(res) != "File not found or not readable: "+p {
			t.Errorf("nav_get_map %s = %v %q", p, err, routertest.Text(res))
		}
	}
}

// A FIFO in place of the audit log (or its lock) is refused, not opened:
// opening it to write would wait for a reader that never comes, and the
// router, which drains the log before it exits, would never exit.
func TestAFIFOForTheAuditLogDoesNotHangTheRouter(t *testing.T) {
	for _, name := range []string{"audit.jsonl", "audit.jsonl.lock"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			audit := filepath.Join(dir, "home", "audit")
			if err := os.MkdirAll(audit, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(audit, name), 0o600); err != nil {
				t.Fatal(err)
			}
			testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{}})
			cmd := exec.Command(testutil.Evokore(t), "serve")
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"), "EVOKORE_AUDIT_LOG=1"}
			cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"discover_tools","arguments":{"query":"files"}}}
`)
			stdout, stderr := &routertest.Buffer{}, &routertest.Buffer{}
			cmd.Stdout, cmd.Stderr = stdout, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("router exit: %v\n%s", err, stderr.String())
				}
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
				t.Fatalf("the router did not exit at the end of its input:\n%s", stderr.String())
			}
			if !strings.Contains(stdout.String(), `"id":2,"result"`) || !strings.Contains(stderr.String(), "Cannot write the audit log") {
				t.Errorf("the call was not answered, or the refused log not reported:\n%s\n%s", stdout.String(), stderr.String())
			}
		})
	}
}

// The project's .claude/settings.json comes with the repository: doctor
// reads it within the cap and only when it is a regular file, so a FIFO
// there (or a symlink to /dev/zero) cannot hang it or grow it.
func TestDoctorReadsOnlyARegularClaudeSettingsFile(t *testing.T) {
	e := doctorEnv(t, map[string]any{})
	for _, d := range []string{filepath.Join(e.home, ".claude"), filepath.Join(e.wd, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(e.wd, ".claude", "settings.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.exe, "doctor")
	cmd.Dir = e.wd
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + e.home, "EVOKORE_HOME=" + e.evokore}, e.env...)
	out, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("doctor hung on a FIFO for the project's settings.json:\n%s", out)
	}
	if !strings.Contains(string(out), "Claude Code hooks are not installed") {
		t.Errorf("doctor:\n%s", out)
	}
}

// What doctor quotes from the project's files reaches the terminal
// escaped: a hook command in a cloned repository's settings.json holding
// an escape sequence cannot retitle or clear the operator's terminal.
func TestDoctorEscapesWhatItQuotesFromTheProject(t *testing.T) {
	e := doctorEnv(t, map[string]any{})
	if err := os.MkdirAll(filepath.Join(e.home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, filepath.Join(e.wd, ".claude"), "settings.json",
		`{"hooks": {"PreToolUse": [{"hooks": [{"command": "/x\u001b]0;pwned\u0007\u001b[2J/evokore hook damage-control"}]}]}}`)
	r := e.run("doctor")
	if strings.ContainsAny(r.stdout, "\x1b\x07") || !strings.Contains(r.stdout, `run /x\u001b]0;pwned\u0007\u001b[2J/evokore, which is not there`) {
		t.Errorf("doctor (exit %d):\n%q", r.code, r.stdout)
	}
}
