package codemode_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native/codemode"
)

// A signal to the router's process group (Ctrl-C at a terminal, which the
// router takes for a graceful shutdown that lets calls finish; SIGHUP, a
// reload) does not reach a running program: the sandbox has a process
// group of its own.
func TestARunningProgramIsOutsideTheRoutersProcessGroup(t *testing.T) {
	var groups []int
	probe := func(context.Context, string, json.RawMessage) (*mcp.CallToolResult, error) {
		groups = append(groups, sandboxGroups(t)...)
		return &mcp.CallToolResult{}, nil
	}
	out := codemode.Run(context.Background(), codemode.SelfCommand, `await tools.probe({}); return 1;`, limits, probe)
	if out.Error != "" {
		t.Fatalf("run failed: %s", out.Error)
	}
	if len(groups) != 1 {
		t.Fatalf("found %d sandbox processes during the call, want 1", len(groups))
	}
	if own := syscall.Getpgrp(); groups[0] == own {
		t.Errorf("the sandbox runs in the router's process group %d: a Ctrl-C meant for the router ends the program", own)
	}
}

// sandboxGroups are the process groups of this process's children that
// run the sandbox.
func sandboxGroups(t *testing.T) []int {
	t.Helper()
	lists, _ := filepath.Glob("/proc/self/task/*/children")
	var out []int
	for _, l := range lists {
		b, _ := os.ReadFile(l)
		for _, pid := range strings.Fields(string(b)) {
			cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			if !strings.Contains(string(cmdline), codemode.SandboxArg) {
				continue
			}
			stat, err := os.ReadFile("/proc/" + pid + "/stat")
			if err != nil {
				t.Fatal(err)
			}
			// pid (comm) state ppid pgrp ...: comm may hold anything but ')'.
			f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			g, err := strconv.Atoi(f[2])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, g)
		}
	}
	return out
}
