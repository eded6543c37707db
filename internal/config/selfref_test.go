package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
)

// The self-reference rule, without starting a router: a stdio server
// whose command is this very executable (this test binary stands for
// evokore) is refused, by absolute path, by a bare name found on PATH
// through a symlink, and by a path relative to its working directory;
// another program and an HTTP server are not; a router started as a
// child (EVOKORE_ROUTER_DEPTH set, even unreadably) refuses every stdio
// server, and marks its children one level deeper.
func TestSelfReferenceRule(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "my-router")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	top := config.NewEnv(nil)
	for _, s := range []config.Server{
		{ID: "abs", Command: exe},
		{ID: "bare", Command: "my-router"},
		{ID: "relative", Command: "." + string(filepath.Separator) + "my-router", Dir: bin},
	} {
		var se *config.SelfReferenceError
		if err := s.SelfReference(top); !errors.As(err, &se) || se.Command == "" || !strings.Contains(err.Error(), "server '"+s.ID+"' is this evokore itself") {
			t.Errorf("%s (%s): %v", s.ID, s.Command, err)
		}
	}
	for _, s := range []config.Server{
		{ID: "sh", Command: "sh"},
		{ID: "missing", Command: filepath.Join(bin, "no-such-program")},
		{ID: "remote", Command: exe, URL: "http://127.0.0.1:1/mcp", Transport: config.TransportHTTP},
	} {
		if err := s.SelfReference(top); err != nil {
			t.Errorf("%s refused: %v", s.ID, err)
		}
	}
	for value, depth := range map[string]int{"1": 1, "3": 3, "deep": 1, "-2": 1} {
		env := config.NewEnv(map[string]string{config.DepthVar: value})
		var se *config.SelfReferenceError
		if err := (config.Server{ID: "sh", Command: "sh"}).SelfReference(env); !errors.As(err, &se) || se.Depth != depth {
			t.Errorf("%s=%s: %v, want depth %d", config.DepthVar, value, err, depth)
		}
		if got := config.ChildMarker(map[string]string{"A": "b"}, env); got[config.DepthVar] != strconv.Itoa(depth+1) || got["A"] != "b" {
			t.Errorf("%s=%s: a child's variables %v", config.DepthVar, value, got)
		}
	}
	if got := config.ChildMarker(nil, top)[config.DepthVar]; got != "1" {
		t.Errorf("a top router's child is marked %q, want 1", got)
	}
}
