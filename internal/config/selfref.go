package config

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// DepthVar marks a process evokore started as a child server: its value
// is how many routers deep the process runs. A router started with it
// starts no stdio children of its own, so a configuration that reaches
// evokore through a wrapper (a shell, npx, a script) that the executable
// comparison cannot see through still ends after one level.
const DepthVar = "EVOKORE_ROUTER_DEPTH"

// SelfReferenceError is a server entry that would start a router inside
// this router.
type SelfReferenceError struct {
	Server string
	// Command is the command as resolved; empty when the refusal comes
	// from DepthVar.
	Command string
	Depth   int
}

func (e *SelfReferenceError) Error() string {
	if e.Command != "" {
		return fmt.Sprintf("server '%s' is this evokore itself (%s): evokore does not start itself as a child, which would start itself again without end. Remove the entry from the config evokore serves", e.Server, e.Command)
	}
	return fmt.Sprintf("server '%s' not started: this evokore was itself started by an evokore as a child server (%s=%d); a router inside a router starts no children, or a config that lists evokore would start it without end", e.Server, DepthVar, e.Depth)
}

// RouterDepth is how many routers deep the process with env runs: 0 for
// one a user or client started.
func RouterDepth(env Env) int {
	n, err := strconv.Atoi(strings.TrimSpace(env.Get(DepthVar)))
	if err != nil || n < 0 {
		// Set but unreadable is still a mark left by a router.
		if env.Get(DepthVar) != "" {
			return 1
		}
		return 0
	}
	return n
}

// ChildMarker returns a child server's own variables with DepthVar set
// one deeper than env's, leaving vars unchanged.
func ChildMarker(vars map[string]string, env Env) map[string]string {
	out := make(map[string]string, len(vars)+1)
	for k, v := range vars {
		out[k] = v
	}
	out[DepthVar] = strconv.Itoa(RouterDepth(env) + 1)
	return out
}

// self is this process's executable, symlinks resolved; nil when it
// cannot be told.
var self = sync.OnceValue(func() os.FileInfo {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return nil
	}
	return fi
})

// StartsSelf reports the executable a resolved stdio server's command
// names when it is this process's own executable, found the way the
// launcher finds it: a bare name through PATH, a relative path from the
// child's working directory, symlinks followed.
func (s Server) StartsSelf() (string, bool) {
	me := self()
	if me == nil || s.IsHTTP() || s.Command == "" {
		return "", false
	}
	path := s.Command
	if !strings.ContainsRune(path, filepath.Separator) {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", false
		}
		path = p
	} else if !filepath.IsAbs(path) && s.Dir != "" {
		path = filepath.Join(s.Dir, path)
	}
	fi, err := os.Stat(path)
	if err != nil || !os.SameFile(fi, me) {
		return "", false
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path, true
}

// SelfReference refuses a resolved stdio server that would start a router
// inside this one: its command is this executable, or this router is
// itself a child of a router (env carries DepthVar).
func (s Server) SelfReference(env Env) error {
	if s.IsHTTP() {
		return nil
	}
	if path, ok := s.StartsSelf(); ok {
		return &SelfReferenceError{Server: s.ID, Command: path}
	}
	if d := RouterDepth(env); d > 0 {
		return &SelfReferenceError{Server: s.ID, Depth: d}
	}
	return nil
}
