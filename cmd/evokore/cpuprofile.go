package main

import (
	"os"
	"runtime/pprof"
)

// debugCPUProfile writes a CPU profile of the whole serve run to the file
// EVOKORE_DEBUG_CPUPROFILE names, for finding where a proxied call's time
// goes (go tool pprof). Without the variable nothing runs.
func debugCPUProfile() (stop func()) {
	path := os.Getenv("EVOKORE_DEBUG_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		return func() {}
	}
	if pprof.StartCPUProfile(f) != nil {
		_ = f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
