package gcpolicy

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// The test binary imports the package like evokore does: collection is
// off with the startup limit until Settle, then the steady state holds.
// startProcs is the runtime's own GOMAXPROCS, read before the policy
// changed it: a package-level variable is initialised before init runs.
var startProcs = runtime.GOMAXPROCS(0)

// settledByAnEarlierRun is set by the first run of the test: the state
// it checks is the process's start, which -count=2 does not repeat.
var settledByAnEarlierRun bool

func TestCollectionIsOffUntilSettle(t *testing.T) {
	if operatorSet {
		t.Skip("GOGC or GOMEMLIMIT is set: the policy leaves the runtime alone")
	}
	if settledByAnEarlierRun {
		t.Skip("an earlier run of this test in the same process settled it")
	}
	settledByAnEarlierRun = true
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GOGC while starting = %d, want off (-1)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != startupLimit {
		t.Fatalf("memory limit while starting = %d, want %d", got, startupLimit)
	}
	if !procsSet && runtime.GOMAXPROCS(0) != startProcs+1 {
		t.Fatalf("GOMAXPROCS while starting = %d, want %d (the runtime's default and one)", runtime.GOMAXPROCS(0), startProcs+1)
	}
	Settle()
	if !procsSet && runtime.GOMAXPROCS(0) != startProcs {
		t.Fatalf("GOMAXPROCS after Settle = %d, want the default %d", runtime.GOMAXPROCS(0), startProcs)
	}
	if got := debug.SetGCPercent(steadyPercent); got != steadyPercent {
		t.Fatalf("GOGC after Settle = %d, want %d", got, steadyPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("memory limit after Settle = %d, want none", got)
	}
	// A second Settle changes nothing (an operator's later choice stands).
	debug.SetGCPercent(77)
	Settle()
	if got := debug.SetGCPercent(steadyPercent); got != 77 {
		t.Fatalf("a second Settle changed GOGC to %d", got)
	}
}
