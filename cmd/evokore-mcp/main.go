// Command evokore-mcp is the command an MCP client starts to talk to
// evokore over stdio. It answers the client's initialize within a few
// milliseconds of its start and then becomes `evokore serve` (execve:
// the same process, stdin and stdout), which serves everything after.
//
// Usage:
//
//	evokore-mcp [serve] [serve flags]
//
// is `evokore serve [serve flags]` with a fast handshake. evokore is
// found through EVOKORE_BIN, else beside evokore-mcp, else on PATH.
//
// Why it exists: evokore links CUE, a JSON Schema compiler and the
// go-sdk, whose package initialisation alone takes tens of milliseconds
// before main runs, so evokore itself cannot answer sooner. This command
// links only the standard library, x/sys/unix and package handoff (with
// the JSON reading it shares with evokore), whose table holds
// the go-sdk's own answers (generated), so the answer is the one evokore
// would give. A first frame it cannot answer exactly, or none within
// firstFrameWait, is left to evokore, which then answers as it does when
// started directly. On Windows, which has no execve, it runs evokore as
// a child with the same stdin and stdout and does not answer early.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/buildinfo"
	"github.com/evokore/evokore/internal/handoff"
)

// version is set at link time, as evokore's is; the answer reports it,
// so both commands should come from one build (make build).
var version = "dev"

// firstFrameWait bounds how long the front waits for the client's first
// line before it hands over with whatever it has: a client that starts
// the server and speaks later must not delay the router's start by more.
const firstFrameWait = 100 * time.Millisecond

func main() {
	router, err := routerPath()
	if err != nil {
		fmt.Fprintln(os.Stderr, "evokore-mcp:", err)
		os.Exit(1)
	}
	flags := os.Args[1:]
	if len(flags) > 0 && flags[0] == "serve" {
		flags = flags[1:] // evokore-mcp serve ... means the same
	}
	args := append([]string{router, "serve"}, flags...)
	// Only a hand-off this front makes reaches the router; with nothing
	// read there is none, and the router reads stdin as if started itself.
	env := withoutHandoff(os.Environ())
	if greets(flags) {
		if prelude := readFirstFrame(firstFrameWait); len(prelude) > 0 {
			var answer []byte
			if line, ok := firstLine(prelude); ok {
				answer = handoff.Answer(line, buildinfo.Version(version))
			}
			if answer != nil && !writeLine(answer) {
				answer = nil
			}
			env = append(env, handoff.Env+"="+handoff.Encode(prelude, answer))
		}
	}
	err = become(router, args, env)
	fmt.Fprintln(os.Stderr, "evokore-mcp: starting", router+":", err)
	os.Exit(1)
}

// greets reports whether serve with args serves stdio: --http serves
// HTTP, which has no handshake to answer here.
func greets(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--http" || strings.HasPrefix(a, "--http=") {
			return false
		}
	}
	return true
}

// routerPath finds the evokore executable: EVOKORE_BIN, else the one
// beside this executable, else PATH. It is resolved before anything is
// answered, so a missing router fails before the client is told the
// server is ready.
func routerPath() (string, error) {
	name := "evokore"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if p := os.Getenv("EVOKORE_BIN"); p != "" {
		return executable(p, "EVOKORE_BIN")
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if _, err := os.Stat(p); err == nil {
			return executable(p, "beside evokore-mcp")
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", errors.New("evokore is neither beside evokore-mcp nor on PATH; set EVOKORE_BIN to its path")
	}
	return p, nil
}

// executable checks p is a regular file with an execute bit.
func executable(p, from string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("evokore (%s): %w", from, err)
	}
	if !fi.Mode().IsRegular() || (runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0) {
		return "", fmt.Errorf("evokore (%s): %s is not an executable file", from, p)
	}
	return p, nil
}

// firstLine returns the prelude's first line without its newline, if it
// has a whole one.
func firstLine(prelude []byte) ([]byte, bool) {
	for i, c := range prelude {
		if c == '\n' {
			return prelude[:i], true
		}
	}
	return nil, false
}

// withoutHandoff drops a hand-off variable the front itself inherited.
func withoutHandoff(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, handoff.Env+"=") {
			out = append(out, kv)
		}
	}
	return out
}
