package gcpolicy

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// The test binary imports the package like evokore does. startProcs is the
// runtime's own GOMAXPROCS, read before the policy changed it: a
// package-level variable is initialised before init runs.
var startProcs = runtime.GOMAXPROCS(0)

// settledByAnEarlierRun is set by the first run of the test: the state
// it checks is the process's start, which -count=2 does not repeat.
var settledByAnEarlierRun bool

// The start runs with one P more than the default and the collector at
// the runtime's default; Settle gives the P back, once.
func TestTheStartHasAnExtraPAndTheDefaultCollector(t *testing.T) {
	if procsSet {
		t.Skip("GOMAXPROCS is set: the policy leaves it alone")
	}
	if settledByAnEarlierRun {
		t.Skip("an earlier run of this test in the same process settled it")
	}
	settledByAnEarlierRun = true
	if !operatorSet {
		if got := debug.SetGCPercent(100); got != 100 {
			t.Fatalf("GOGC while starting = %d, want the runtime's default 100", got)
		}
		if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
			t.Fatalf("memory limit while starting = %d, want none", got)
		}
	}
	if runtime.GOMAXPROCS(0) != startProcs+1 {
		t.Fatalf("GOMAXPROCS while starting = %d, want %d (the runtime's default and one)", runtime.GOMAXPROCS(0), startProcs+1)
	}
	Settle()
	if runtime.GOMAXPROCS(0) != startProcs {
		t.Fatalf("GOMAXPROCS after Settle = %d, want the default %d", runtime.GOMAXPROCS(0), startProcs)
	}
	// A second Settle changes nothing (an operator's later choice stands).
	runtime.GOMAXPROCS(startProcs + 3)
	defer runtime.GOMAXPROCS(startProcs)
	Settle()
	if got := runtime.GOMAXPROCS(0); got != startProcs+3 {
		t.Fatalf("a second Settle changed GOMAXPROCS to %d", got)
	}
}
