//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

// debugMemStats serves the benchmarks' allocation probe: with
// EVOKORE_DEBUG_MEMSTATS naming a file, every SIGUSR1 appends one JSON
// line of the Go runtime's cumulative allocation counters to it, so a
// benchmark reads allocations per call as the difference of two probes
// around its calls. Without the variable nothing is installed.
func debugMemStats() (stop func()) {
	path := os.Getenv("EVOKORE_DEBUG_MEMSTATS")
	if path == "" {
		return func() {}
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-sigs:
				writeMemStats(path)
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// memProbe is one line of the probe file.
type memProbe struct {
	TotalAlloc uint64 `json:"totalAlloc"`
	Mallocs    uint64 `json:"mallocs"`
	NumGC      uint32 `json:"numGC"`
	HeapInuse  uint64 `json:"heapInuse"`
}

func writeMemStats(path string) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	line, _ := json.Marshal(memProbe{TotalAlloc: ms.TotalAlloc, Mallocs: ms.Mallocs, NumGC: ms.NumGC, HeapInuse: ms.HeapInuse})
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write(append(line, '\n'))
	_ = f.Close()
}
