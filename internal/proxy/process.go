package proxy

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/config"
)

// baseEnv are the variables every stdio child gets from the router's
// environment: enough to find programs, a home, a locale, a temp dir and
// a proxy, and nothing that belongs to another server.
var baseEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE",
	"TMPDIR", "TMP", "TEMP", "TZ", "TERM",
	"XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
	// Windows needs these to start anything at all.
	"SYSTEMROOT", "SystemRoot", "COMSPEC", "PATHEXT", "WINDIR", "APPDATA", "LOCALAPPDATA",
	"USERPROFILE", "PROGRAMFILES", "ProgramFiles", "ProgramData",
}

// childEnv builds a stdio child's environment: the base allowlist (or the
// whole environment with inheritEnv) plus the server's own env.
func childEnv(s config.Server, env config.Env) []string {
	var vars map[string]string
	if s.InheritEnv {
		vars = map[string]string{}
		for _, kv := range env.Pairs() {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
	} else {
		vars = make(map[string]string, len(baseEnv)+len(s.Env))
		for _, k := range baseEnv {
			if v, ok := env.Lookup(k); ok {
				vars[k] = v
			}
		}
	}
	for k, v := range s.Env {
		vars[k] = v
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return out
}

// resolveCommand maps `npx` to `npx.cmd` on Windows, as EVOKORE-MCP does;
// everything else must be on PATH as written.
func resolveCommand(cmd string) string {
	if runtime.GOOS == "windows" && cmd == "npx" {
		return "npx.cmd"
	}
	return cmd
}

// process is a running stdio child.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	done   chan struct{} // closed when the process has exited
	err    error         // exit status, valid after done
}

// startProcess starts a stdio child in its own process group with stderr
// forwarded to log line by line, prefixed with the server id.
func startProcess(s config.Server, env config.Env, log io.Writer) (*process, error) {
	cmd := exec.Command(resolveCommand(s.Command), s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = childEnv(s, env)
	cmd.SysProcAttr = childProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, stdin: stdin, stdout: stdout, done: make(chan struct{})}
	var drained sync.WaitGroup
	drained.Add(1)
	go func() {
		defer drained.Done()
		forwardLines(stderr, log, "["+s.ID+"] ")
	}()
	go func() {
		// Wait closes the pipes, so let stderr drain first.
		drained.Wait()
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// forwardLines copies r to w one line at a time with a prefix, so lines
// from different children never interleave mid-line.
func forwardLines(r io.Reader, w io.Writer, prefix string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		fmt.Fprintf(w, "%s%s\n", prefix, sc.Text())
	}
}

// stop ends the process the way the MCP spec asks: close its stdin, wait,
// then SIGTERM and finally SIGKILL its whole process group, so helpers it
// started (npx starts node) go too.
func (p *process) stop(grace time.Duration) {
	_ = p.stdin.Close()
	if p.wait(grace) {
		return
	}
	signalGroup(p.cmd, sigTerm)
	if p.wait(grace) {
		return
	}
	signalGroup(p.cmd, sigKill)
	p.wait(grace)
}

func (p *process) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// exited reports whether the process is gone.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}
