// Package gcpolicy owns the Go collector's settings of the evokore
// process: collection is off while the process starts, then it runs with
// the steady-state target below. Only cmd/evokore imports it; importing it
// is what applies the policy.
//
// Why. Starting evokore allocates about 4 MiB in package initialisation
// (jsonschema/v6 compiles five drafts' meta-schemas, CUE builds its
// tables) and as much again building the router before the handshake is
// answered. With the default GOGC=100 and its 4 MiB minimum heap, that is
// two or three collections before `initialize` is answered, each with a
// stop-the-world, a mark phase that takes one of the two cores of a small
// machine, and page faults on the collector's own metadata. Measured on a
// 2-core box (30 interleaved spawns, four children configured), the CPU
// the process used until `initialize` was answered went from 47 ms to
// 28 ms with collection off, and jsonschema/v6's init from 9–10 to 6–7 ms
// (a collection used to land inside it). Nothing allocated while starting
// is garbage worth collecting early: the heap is small and most of it
// stays live.
//
// What. While starting, the collector is off (SetGCPercent(-1)) with a
// soft memory limit as a backstop, so a start that allocates much more
// than usual (a skills library of thousands of files, a child with
// thousands of tools) still collects, by the limit, instead of growing
// without bound. Settle ends the start: the steady-state GOGC takes over,
// the limit is lifted, and the pages the start used and no longer needs
// are returned to the operating system at once (debug.FreeOSMemory: one
// collection, at a moment nothing waits on the router). `evokore serve`
// settles when its children finished their first boot; every command
// settles after settleAfter at the latest, so a long-running command that
// does not call Settle still collects normally, and a short one (version,
// hook, vet) exits without ever collecting.
//
// The start also runs with one P more than the runtime's default
// (GOMAXPROCS), until Settle restores the default. The reader of stdin
// blocks in read(2), and a goroutine blocked in a system call keeps its
// P until the runtime's monitor takes it back, which, on a process that
// was quiet a moment ago, it does only every 10 ms. Right after the
// handshake the skills index is built on one P while the reader holds
// the other: a client's first tools/list, sent on the heels of the
// handshake, waited 11–13 ms for a P (execution trace). With the extra P
// it waits for none: spawn-to-first-tools/list 20.6 → 9–10 ms after the
// initialize answer (20 interleaved spawns × 2, four children
// configured), initialize
// itself unchanged. In the steady state the extra P bought nothing in
// make bench-proxy (p50 and 16-in-flight within noise, the npm child's
// p50 worse in one run), so it ends with the start. GOMAXPROCS in the
// environment leaves the setting alone.
//
// The steady state is the runtime's default, GOGC=100. A lower target
// (50) keeps the router's own memory about 4 MiB lower but collects twice
// as often: make bench-proxy measured it at 35–75 µs more CPU per proxied
// call, and a router's cost per call is its headline number. An operator
// who prefers memory sets GOGC (or GOMEMLIMIT) and decides.
//
// The operator decides over all of this: with GOGC or GOMEMLIMIT set in
// the environment, the runtime's own reading of them stands and this
// package changes nothing.
package gcpolicy

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/proctree"
)

const (
	// startupLimit is the soft memory limit while collection is off: far
	// above a normal start (about 15 MiB), low enough that a pathological
	// one collects long before it matters.
	startupLimit = 64 << 20
	// settleAfter ends the start of any command that did not settle
	// itself.
	settleAfter = 2 * time.Second
	// steadyPercent is the GOGC evokore runs with once started.
	steadyPercent = 100
)

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
	if operatorSet {
		time.AfterFunc(settleAfter, Settle)
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(startupLimit)
	time.AfterFunc(settleAfter, Settle)
}

// Settle ends the start: the steady-state collector settings take over and
// the memory the start no longer uses goes back to the system, its heap
// and the pages of the binary it touched. Only the
// first call does anything; it is safe from any goroutine.
func Settle() {
	settleOnce.Do(func() {
		if !procsSet {
			runtime.SetDefaultGOMAXPROCS()
		}
		// The pages of the binary only the start touched (package
		// inits, building the router) leave the resident set too,
		// whoever chose the collector's settings.
		defer proctree.DropFilePages()
		if operatorSet {
			return
		}
		debug.SetGCPercent(steadyPercent)
		debug.SetMemoryLimit(math.MaxInt64)
		debug.FreeOSMemory()
	})
}
