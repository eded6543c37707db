package skilltools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/config"
)

// Sandbox limits and modes.
const (
	defaultRunTimeout = 30 * time.Second
	maxOutput         = 1 << 20 // 1 MB, stdout and stderr together
	modeAuto          = "auto"
	modeContainer     = "container"
	modeProcess       = "process"
)

// parentEnvAllowlist are the variables a run inherits from the router.
var parentEnvAllowlist = []string{
	"PATH", "HOME", "USER", "SHELL", "LANG", "TERM", "TMPDIR", "TMP", "TEMP",
	"SYSTEMROOT", "COMSPEC", "WINDIR", "PATHEXT", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA",
	"NODE_ENV", "EVOKORE_SANDBOX", "EVOKORE_SESSION_ROLE", "EVOKORE_SESSION_ID",
}

// forbiddenOverrides may not be set through execute_skill's env: they
// change what runs or how it loads code.
var forbiddenOverrides = []string{
	"PATH", "HOME", "NODE_OPTIONS", "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH",
	"DYLD_INSERT_LIBRARIES", "PYTHONPATH", "PYTHONSTARTUP", "BASH_ENV", "ENV", "SYSTEMROOT", "COMSPEC",
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkEnv lists the problems of a user env: forbidden or invalid names.
func checkEnv(env map[string]string) []string {
	var bad []string
	for k := range env {
		switch {
		case !envName.MatchString(k):
			bad = append(bad, fmt.Sprintf("%q is not a valid variable name", k))
		case slices.ContainsFunc(forbiddenOverrides, func(f string) bool { return strings.EqualFold(f, k) }):
			bad = append(bad, k+" may not be overridden")
		}
	}
	slices.Sort(bad)
	return bad
}

// language is how one fence language runs.
type language struct {
	name string
	// interpreters are tried in order on PATH; args follow the script
	// path (process mode).
	interpreters []string
	ext          string
	// image and stdinArgs run it in a container, the script on stdin.
	image     string
	stdinArgs []string
}

var languages = map[string]language{
	"bash":       {name: "bash", interpreters: []string{"bash"}, ext: ".sh", image: "bash:5.2", stdinArgs: []string{"bash", "-s"}},
	"sh":         {name: "sh", interpreters: []string{"sh"}, ext: ".sh", image: "alpine:3.20", stdinArgs: []string{"sh", "-s"}},
	"shell":      {name: "sh", interpreters: []string{"sh"}, ext: ".sh", image: "alpine:3.20", stdinArgs: []string{"sh", "-s"}},
	"python":     {name: "python", interpreters: []string{"python3", "python"}, ext: ".py", image: "python:3.12-alpine", stdinArgs: []string{"python3", "-"}},
	"py":         {name: "python", interpreters: []string{"python3", "python"}, ext: ".py", image: "python:3.12-alpine", stdinArgs: []string{"python3", "-"}},
	"javascript": {name: "js", interpreters: []string{"node"}, ext: ".js", image: "node:20-alpine", stdinArgs: []string{"node", "-"}},
	"js":         {name: "js", interpreters: []string{"node"}, ext: ".js", image: "node:20-alpine", stdinArgs: []string{"node", "-"}},
	"typescript": {name: "ts", interpreters: []string{"tsx"}, ext: ".ts"},
	"ts":         {name: "ts", interpreters: []string{"tsx"}, ext: ".ts"},
}

// supportedLanguages is the list the error messages give.
const supportedLanguages = "bash, sh, python (py), js (javascript); ts when tsx is on PATH"

// sandbox runs code blocks: in a container when an engine runs, else as
// a process group with a scrubbed environment.
type sandbox struct {
	env     config.Env
	log     io.Writer
	mode    string
	timeout time.Duration
	memMB   int
	cpus    string
	seccomp string

	engineOnce sync.Once
	engine     string
}

func newSandbox(env config.Env, log io.Writer) *sandbox {
	sb := &sandbox{env: env, log: log, mode: strings.ToLower(strings.TrimSpace(env.Get("EVOKORE_SANDBOX_MODE"))),
		timeout: defaultRunTimeout, memMB: 256, cpus: "1", seccomp: env.Get("EVOKORE_SANDBOX_SECCOMP_PROFILE")}
	if sb.mode == "" {
		sb.mode = modeAuto
	}
	// EVOKORE_SANDBOX_TIMEOUT_MS is evokore's own: tests and slow
	// machines set it; the default is EVOKORE-MCP's 30 s.
	if n, err := strconv.Atoi(strings.TrimSpace(env.Get("EVOKORE_SANDBOX_TIMEOUT_MS"))); err == nil && n > 0 {
		sb.timeout = time.Duration(n) * time.Millisecond
	}
	if n, err := strconv.Atoi(strings.TrimSpace(env.Get("EVOKORE_SANDBOX_MEMORY_MB"))); err == nil && n > 0 {
		sb.memMB = n
	}
	if c := strings.TrimSpace(env.Get("EVOKORE_SANDBOX_CPU_LIMIT")); c != "" {
		if _, err := strconv.ParseFloat(c, 64); err == nil {
			sb.cpus = c
		}
	}
	return sb
}

// containerEngine returns the first of docker and podman whose daemon
// answers, once per process.
func (sb *sandbox) containerEngine() string {
	sb.engineOnce.Do(func() {
		for _, e := range []string{"docker", "podman"} {
			p, err := exec.LookPath(e)
			if err != nil {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = exec.CommandContext(ctx, p, "info").Run()
			cancel()
			if err == nil {
				sb.engine = p
				return
			}
		}
	})
	return sb.engine
}

// runResult is what one run did.
type runResult struct {
	Mode      string
	ExitCode  int
	TimedOut  bool
	Truncated bool
	Stdout    string
	Stderr    string
}

// Text renders the result the way EVOKORE-MCP did.
func (r runResult) Text(timeout time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[sandbox: %s]\n", r.Mode)
	if r.TimedOut {
		fmt.Fprintf(&b, "[TIMED OUT after %s]\n", timeout)
	}
	if r.Truncated {
		b.WriteString("[OUTPUT TRUNCATED at 1 MB; the run was stopped]\n")
	}
	fmt.Fprintf(&b, "Exit code: %d\n", r.ExitCode)
	fmt.Fprintf(&b, "--- stdout ---\n%s\n", strings.TrimRight(r.Stdout, "\n"))
	fmt.Fprintf(&b, "--- stderr ---\n%s", strings.TrimRight(r.Stderr, "\n"))
	return b.String()
}

// cappedOutput collects stdout and stderr up to a shared limit and calls
// over once when the limit is passed.
type cappedOutput struct {
	mu        sync.Mutex
	left      int
	truncated bool
	over      func()
}

type capWriter struct {
	c   *cappedOutput
	buf bytes.Buffer
}

func (w *capWriter) Write(p []byte) (int, error) {
	c := w.c
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(len(p), c.left)
	w.buf.Write(p[:n])
	c.left -= n
	if n < len(p) && !c.truncated {
		c.truncated = true
		if c.over != nil {
			go c.over()
		}
	}
	return len(p), nil
}

func (w *capWriter) String() string {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.buf.String()
}

// run executes code written in lang. env are the caller's variables
// (already checked), extra the ones the router sets.
func (sb *sandbox) run(ctx context.Context, lang language, code string, env, extra map[string]string) (runResult, error) {
	switch sb.mode {
	case modeProcess:
		return sb.runProcess(ctx, lang, code, env, extra)
	case modeContainer:
		if sb.containerEngine() == "" {
			return runResult{}, fmt.Errorf("EVOKORE_SANDBOX_MODE=container, but no container engine (docker or podman) is running")
		}
		return sb.runContainer(ctx, lang, code, env, extra)
	case modeAuto:
		if lang.image != "" && sb.containerEngine() != "" {
			return sb.runContainer(ctx, lang, code, env, extra)
		}
		return sb.runProcess(ctx, lang, code, env, extra)
	}
	return runResult{}, fmt.Errorf("unknown EVOKORE_SANDBOX_MODE %q: use auto, container or process", sb.mode)
}

// runsAsProcess reports whether lang would run as a local process (so its
// interpreter must be on PATH).
func (sb *sandbox) runsAsProcess(lang language) bool {
	switch sb.mode {
	case modeProcess:
		return true
	case modeAuto:
		return lang.image == "" || sb.containerEngine() == ""
	}
	return false
}

// interpreter finds lang's interpreter on PATH.
func (sb *sandbox) interpreter(lang language) (string, error) {
	for _, name := range lang.interpreters {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no %s interpreter (%s) on PATH", lang.name, strings.Join(lang.interpreters, " or "))
}

// runProcess runs the script as the leader of a new process group; on
// timeout, on too much output and after it exits, the whole group is
// killed, so nothing it started outlives it. It runs in the router's
// working directory (steps such as `git status` are about the project);
// process mode is containment of time, output and environment, not
// isolation: use a container engine for that.
func (sb *sandbox) runProcess(ctx context.Context, lang language, code string, env, extra map[string]string) (runResult, error) {
	bin, err := sb.interpreter(lang)
	if err != nil {
		return runResult{}, err
	}
	dir, err := os.MkdirTemp("", "evokore-skill-")
	if err != nil {
		return runResult{}, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "step"+lang.ext)
	if err := os.WriteFile(script, []byte(code), 0o600); err != nil {
		return runResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, sb.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, script)
	vars := map[string]string{}
	for _, k := range parentEnvAllowlist {
		if v, ok := sb.env.Lookup(k); ok {
			vars[k] = v
		}
	}
	for k, v := range env {
		vars[k] = v
	}
	for k, v := range extra {
		vars[k] = v
	}
	vars["EVOKORE_SANDBOX"] = modeProcess
	cmd.Env = envList(vars)
	cmd.Stdin = nil
	setProcessGroup(cmd)
	out := &cappedOutput{left: maxOutput}
	stdout, stderr := &capWriter{c: out}, &capWriter{c: out}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return runResult{}, err
	}
	out.mu.Lock()
	out.over = func() { _ = killGroup(cmd) }
	out.mu.Unlock()
	waitErr := cmd.Wait()
	_ = killGroup(cmd) // whatever the script left running in its group
	r := runResult{Mode: modeProcess, ExitCode: cmd.ProcessState.ExitCode(), TimedOut: ctx.Err() == context.DeadlineExceeded,
		Stdout: stdout.String(), Stderr: stderr.String()}
	out.mu.Lock()
	r.Truncated = out.truncated
	out.mu.Unlock()
	if waitErr != nil && r.ExitCode == 0 && !r.TimedOut && !r.Truncated {
		r.ExitCode = -1
		r.Stderr += "\n" + waitErr.Error()
	}
	return r, nil
}

// runContainer runs the script on the stdin of a throwaway container
// with no network, a read-only root, no capabilities and bounded memory,
// CPU and processes.
func (sb *sandbox) runContainer(ctx context.Context, lang language, code string, env, extra map[string]string) (runResult, error) {
	if lang.image == "" {
		return runResult{}, fmt.Errorf("%s blocks cannot run in a container; set EVOKORE_SANDBOX_MODE=process", lang.name)
	}
	engine := sb.containerEngine()
	var id [6]byte
	_, _ = rand.Read(id[:])
	name := "evokore-sandbox-" + hex.EncodeToString(id[:])
	mem, cpus := sb.memMB, sb.cpus
	upper := strings.ToUpper(lang.name)
	if n, err := strconv.Atoi(sb.env.Get("EVOKORE_SANDBOX_" + upper + "_MEMORY_MB")); err == nil && n > 0 {
		mem = n
	}
	if c := sb.env.Get("EVOKORE_SANDBOX_" + upper + "_CPU_LIMIT"); c != "" {
		if _, err := strconv.ParseFloat(c, 64); err == nil {
			cpus = c
		}
	}
	args := []string{"run", "--rm", "-i", "--name", name,
		"--network=none", "--read-only", "--tmpfs", "/tmp:rw,noexec,size=64m",
		fmt.Sprintf("--memory=%dm", mem), "--cpus=" + cpus, "--pids-limit=100",
		"--cap-drop=ALL", "--security-opt=no-new-privileges"}
	if sb.seccomp != "" {
		args = append(args, "--security-opt", "seccomp="+sb.seccomp)
	}
	args = append(args, "--user=1000:1000")
	vars := map[string]string{}
	for k, v := range env {
		vars[k] = v
	}
	for k, v := range extra {
		vars[k] = v
	}
	vars["EVOKORE_SANDBOX"] = modeContainer
	for _, kv := range envList(vars) {
		args = append(args, "-e", kv)
	}
	args = append(args, lang.image)
	args = append(args, lang.stdinArgs...)

	ctx, cancel := context.WithTimeout(ctx, sb.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, engine, args...)
	cmd.Stdin = strings.NewReader(code)
	setProcessGroup(cmd)
	out := &cappedOutput{left: maxOutput}
	stdout, stderr := &capWriter{c: out}, &capWriter{c: out}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	stopContainer := func() {
		kctx, kcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer kcancel()
		_ = exec.CommandContext(kctx, engine, "kill", name).Run()
	}
	cmd.Cancel = func() error {
		stopContainer()
		return killGroup(cmd)
	}
	cmd.WaitDelay = 5 * time.Second
	out.over = func() { stopContainer(); _ = killGroup(cmd) }
	if err := cmd.Start(); err != nil {
		return runResult{}, err
	}
	waitErr := cmd.Wait()
	r := runResult{Mode: "container (" + filepath.Base(engine) + ", " + lang.image + ")", ExitCode: cmd.ProcessState.ExitCode(),
		TimedOut: ctx.Err() == context.DeadlineExceeded, Stdout: stdout.String(), Stderr: stderr.String()}
	out.mu.Lock()
	r.Truncated = out.truncated
	out.mu.Unlock()
	if waitErr != nil && r.ExitCode == 0 && !r.TimedOut {
		r.ExitCode = -1
	}
	return r, nil
}

func envList(vars map[string]string) []string {
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
