package codemode_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native/codemode"
)

// The sandbox holds no file but its three pipes: not a file or a pipe
// the router was handed without close-on-exec (planted here: a file and
// a pipe opened by raw system calls, as a client's leaked descriptors
// are), and not the cgroup files the Go runtime would open. What else it
// holds is the runtime's own poller (an epoll and an eventfd), which
// reach nothing.
func TestTheSandboxHoldsOnlyItsPipes(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("the router's"), 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(secret, syscall.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // no O_CLOEXEC either
		t.Fatal(err)
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])

	var held map[string]string
	probe := func(context.Context, string, json.RawMessage) (*mcp.CallToolResult, error) {
		held = sandboxFiles(t)
		return &mcp.CallToolResult{}, nil
	}
	out := codemode.Run(context.Background(), codemode.SelfCommand, `await tools.probe({}); return 1;`, limits, probe)
	if out.Error != "" {
		t.Fatalf("run failed: %s", out.Error)
	}
	if len(held) == 0 {
		t.Fatal("found no sandbox during the call")
	}
	for fd, target := range held {
		switch {
		case fd == "0" || fd == "1" || fd == "2":
			if !strings.HasPrefix(target, "pipe:") {
				t.Errorf("fd %s of the sandbox is %s, want a pipe", fd, target)
			}
		case target == "anon_inode:[eventpoll]" || target == "anon_inode:[eventfd]":
		default:
			t.Errorf("the sandbox holds fd %s: %s", fd, target)
		}
	}
}

// sandboxFiles lists the open descriptors of the sandbox this process
// runs now: number → what it points at.
func sandboxFiles(t *testing.T) map[string]string {
	t.Helper()
	lists, _ := filepath.Glob("/proc/self/task/*/children")
	out := map[string]string{}
	for _, l := range lists {
		b, _ := os.ReadFile(l)
		for _, pid := range strings.Fields(string(b)) {
			cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			if !strings.Contains(string(cmdline), codemode.SandboxArg) {
				continue
			}
			entries, err := os.ReadDir("/proc/" + pid + "/fd")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				target, _ := os.Readlink("/proc/" + pid + "/fd/" + e.Name())
				out[e.Name()] = target
			}
		}
	}
	return out
}
