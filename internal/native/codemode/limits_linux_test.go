package codemode

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// spinEnv makes TestCPUBackstopKills's own process the one it bounds.
const spinEnv = "EVOKORE_TEST_CODEMODE_SPIN"

// RLIMIT_CPU kills a process that spins past its CPU time where the
// engine's interrupt cannot reach, between one and two seconds after
// the bound, as docs/codemode.md says. (The Go runtime ignores
// SIGXCPU, so only the hard limit ends it.)
func TestCPUBackstopKills(t *testing.T) {
	const bound = time.Second
	if os.Getenv(spinEnv) != "" {
		if err := limitSelf(Limits{CPU: bound}); err != nil {
			os.Exit(3)
		}
		//lint:ignore SA5002 the spin is the point: only the CPU limit may end it
		for {
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCPUBackstopKills$")
	cmd.Env = append(os.Environ(), spinEnv+"=1")
	_ = cmd.Run()
	ps := cmd.ProcessState
	if ws, ok := ps.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the spinning process ended with %v, want SIGKILL", ps)
	}
	used := ps.UserTime() + ps.SystemTime()
	if used < bound+time.Second/2 || used > bound+2*time.Second {
		t.Errorf("killed after %s of CPU time, want between %s and %s", used, bound+time.Second, bound+2*time.Second)
	}
}
