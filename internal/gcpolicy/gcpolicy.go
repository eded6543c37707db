// Package gcpolicy owns the Go runtime's settings of the evokore process
// while it starts: one P more than the default until the start settles,
// and, when it settles, the heap the start no longer uses goes back to the
// system. Only cmd/evokore imports it; importing it is what applies the
// policy. The collector runs with the runtime's defaults throughout.
//
// The extra P. The reader of stdin blocks in read(2), and a goroutine
// blocked in a system call keeps its P until the runtime's monitor takes
// it back, which, on a process that was quiet a moment ago, it does only
// every 10 ms. Right after the handshake the skills index is built on one
// P while the reader holds the other: a client's first tools/list, sent on
// the heels of the handshake, waited 11–13 ms for a P (execution trace).
// With the extra P it waits for none: spawn-to-first-tools/list 20.6 →
// 9–10 ms after the initialize answer (20 interleaved spawns × 2, four
// children configured). In the steady state it bought nothing in
// make bench-proxy, so it ends with the start. GOMAXPROCS in the
// environment leaves the setting alone.
//
// Settling. `evokore serve` settles when its children finished their first
// boot; every command settles after settleAfter at the latest. Settling
// returns the heap the start used and no longer needs to the system at
// once (debug.FreeOSMemory: one collection, at a moment nothing waits on
// the router), which leaves the router about 2 MiB less private memory
// while it idles than the runtime's gradual scavenger does
// (BenchmarkRouterMemoryWith4Children, same rounds). GOGC or GOMEMLIMIT in
// the environment leave the collector to the operator: nothing is forced
// then.
//
// The collector used to be off while the process started. It saved CPU
// before the handshake but left the router with about 2 MiB more private
// memory after its start and after a burst of calls, measured in the same
// rounds, so it went.
package gcpolicy

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// settleAfter ends the start of any command that did not settle itself.
const settleAfter = 2 * time.Second

var (
	// operatorSet is true when the environment chose the collector's
	// settings; they are then left alone.
	operatorSet = os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != ""
	// procsSet is true when the environment chose GOMAXPROCS.
	procsSet   = os.Getenv("GOMAXPROCS") != ""
	settleOnce sync.Once
)

func init() {
	if !procsSet {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
	}
	time.AfterFunc(settleAfter, Settle)
}

// Settle ends the start: GOMAXPROCS goes back to the default and the heap
// the start no longer uses goes back to the system. Only the first call
// does anything; it is safe from any goroutine.
func Settle() {
	settleOnce.Do(func() {
		if !procsSet {
			runtime.SetDefaultGOMAXPROCS()
		}
		if operatorSet {
			return
		}
		debug.FreeOSMemory()
	})
}
