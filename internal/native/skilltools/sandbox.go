package skilltools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
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
	"github.com/evokore/evokore/internal/procgroup"
)

// Sandbox limits and modes.
const (
	defaultRunTimeout = config.DefaultSandboxTimeout
	maxOutput         = 1 << 20 // 1 MB, stdout and stderr together
	modeAuto          = "auto"
	modeContainer     = "container"
	modeProcess       = "process"
)

// The model's env reaches a run only under names that no interpreter,
// loader, shell or tool reads: SKILL_ followed by capitals, digits and
// underscores. An allowlist, because every denylist of the variables that
// change what runs had gaps (GIT_CONFIG_* with core.fsmonitor, SHELLOPTS
// with PS4, PYTHONWARNINGS with BROWSER, LD_AUDIT, ...). The rest of a
// run's environment is the launcher's base allowlist of the router's
// variables plus what the router sets (EVOKORE_SANDBOX, the session).
const skillEnvPrefix = "SKILL_"

var skillEnvName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^SKILL_[A-Z0-9_]+$`) })

// checkEnv lists, sorted, the names of a model-supplied env that are
// outside the SKILL_* allowlist.
func checkEnv(env map[string]string) []string {
	var bad []string
	for k := range env {
		if !skillEnvName().MatchString(k) {
			bad = append(bad, strconv.Quote(k))
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
	log     *slog.Logger
	mode    string
	timeout time.Duration
	memMB   int
	cpus    string
	seccomp string

	engineOnce sync.Once
	engine     string
}

// languageLimits name the variables that override a container's memory
// and CPUs for one language, spelt out so that each is declared in
// evokore.cue and known to the unknown-variable report.
var languageLimits = map[string]struct{ memory, cpus string }{
	"bash":   {"EVOKORE_SANDBOX_BASH_MEMORY_MB", "EVOKORE_SANDBOX_BASH_CPU_LIMIT"},
	"sh":     {"EVOKORE_SANDBOX_SH_MEMORY_MB", "EVOKORE_SANDBOX_SH_CPU_LIMIT"},
	"python": {"EVOKORE_SANDBOX_PYTHON_MEMORY_MB", "EVOKORE_SANDBOX_PYTHON_CPU_LIMIT"},
	"js":     {"EVOKORE_SANDBOX_JS_MEMORY_MB", "EVOKORE_SANDBOX_JS_CPU_LIMIT"},
}

func newSandbox(env config.Env, log *slog.Logger) *sandbox {
	sb := &sandbox{env: env, log: log, mode: strings.ToLower(strings.TrimSpace(env.Get("EVOKORE_SANDBOX_MODE"))),
		timeout: defaultRunTimeout, memMB: config.DefaultSandboxMemoryMB, cpus: config.DefaultSandboxCPULimit, seccomp: env.Get("EVOKORE_SANDBOX_SECCOMP_PROFILE")}
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
			err = sb.engineCommand(ctx, p, "info").Run()
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

// runProcess runs the script through the launcher; on timeout, on too
// much output and after it exits, its whole tree is killed, so nothing it
// started outlives it. It runs in the router's
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
	vars := map[string]string{}
	for k, v := range env {
		vars[k] = v
	}
	for k, v := range extra {
		vars[k] = v
	}
	vars["EVOKORE_SANDBOX"] = modeProcess
	// The launcher kills the whole tree on timeout (ctx) and once the
	// script exits, so nothing it started outlives the run.
	cmd := procgroup.Command(ctx, procgroup.Spec{Path: bin, Args: []string{script},
		Env: procgroup.Env{Parent: sb.env, Set: vars}, Grace: 2 * time.Second})
	out := &cappedOutput{left: maxOutput}
	stdout, stderr := &capWriter{c: out}, &capWriter{c: out}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	out.mu.Lock()
	out.over = cmd.Kill
	out.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return runResult{}, err
	}
	waitErr := cmd.Wait()
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
	limits := languageLimits[lang.name]
	if n, err := strconv.Atoi(sb.env.Get(limits.memory)); err == nil && n > 0 {
		mem = n
	}
	if c := sb.env.Get(limits.cpus); c != "" {
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
	cmd := sb.engineCommand(ctx, engine, args...)
	cmd.Stdin = strings.NewReader(code)
	out := &cappedOutput{left: maxOutput}
	stdout, stderr := &capWriter{c: out}, &capWriter{c: out}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	stopContainer := func() {
		kctx, kcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer kcancel()
		_ = sb.engineCommand(kctx, engine, "kill", name).Run()
	}
	cmd.Cancel = func() error {
		stopContainer()
		cmd.Kill()
		return nil
	}
	cmd.WaitDelay = 5 * time.Second
	out.over = func() { stopContainer(); cmd.Kill() }
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

// engineCommand runs the container engine's CLI through the launcher. The
// CLI is the router's own tool and gets the router's whole environment
// (DOCKER_HOST, CONTAINER_HOST, its config dirs); the container itself
// gets only the -e variables.
func (sb *sandbox) engineCommand(ctx context.Context, engine string, args ...string) *procgroup.Cmd {
	return procgroup.Command(ctx, procgroup.Spec{Path: engine, Args: args, Env: procgroup.Env{Parent: sb.env, Inherit: true}})
}

func envList(vars map[string]string) []string {
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
