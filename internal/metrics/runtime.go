package metrics

import (
	"math"
	"runtime"
	rtmetrics "runtime/metrics"
)

// goSeries are the Go runtime's series, under the names the client
// library's Go collector gave them, read from runtime/metrics (which,
// unlike runtime.ReadMemStats, does not stop the world).
var goSeries = []struct{ name, typ, help, key string }{
	{"go_gc_gogc_percent", "gauge", "Heap size target percentage configured by the user, otherwise 100.", "/gc/gogc:percent"},
	{"go_gc_gomemlimit_bytes", "gauge", "Go runtime memory limit configured by the user, otherwise math.MaxInt64.", "/gc/gomemlimit:bytes"},
	{"go_goroutines", "gauge", "Number of goroutines that currently exist.", "/sched/goroutines:goroutines"},
	{"go_memstats_alloc_bytes", "gauge", "Number of heap bytes allocated and currently in use.", "/memory/classes/heap/objects:bytes"},
	{"go_memstats_alloc_bytes_total", "counter", "Total number of heap bytes allocated, even if freed.", "/gc/heap/allocs:bytes"},
	{"go_memstats_heap_alloc_bytes", "gauge", "Number of heap bytes allocated and currently in use.", "/memory/classes/heap/objects:bytes"},
	{"go_memstats_next_gc_bytes", "gauge", "Number of heap bytes when next garbage collection will take place.", "/gc/heap/goal:bytes"},
	{"go_memstats_sys_bytes", "gauge", "Number of bytes obtained from system.", "/memory/classes/total:bytes"},
	{"go_sched_gomaxprocs_threads", "gauge", "The current runtime.GOMAXPROCS setting.", "/sched/gomaxprocs:threads"},
	{"go_threads", "gauge", "Number of OS threads created.", "/sched/threads/total:threads"},
}

// goFamilies reads the runtime's series now, and go_info.
func goFamilies() []family {
	samples := make([]rtmetrics.Sample, len(goSeries))
	for i, s := range goSeries {
		samples[i].Name = s.key
	}
	rtmetrics.Read(samples)
	out := make([]family, 0, len(goSeries)+1)
	for i, s := range goSeries {
		var v float64
		switch samples[i].Value.Kind() {
		case rtmetrics.KindUint64:
			v = float64(samples[i].Value.Uint64())
		case rtmetrics.KindFloat64:
			v = samples[i].Value.Float64()
		default:
			continue // not in this Go version
		}
		if math.IsNaN(v) {
			continue
		}
		f := family{name: s.name, typ: s.typ, help: s.help}
		f.add("", v)
		out = append(out, f)
	}
	info := family{name: "go_info", typ: "gauge", help: "Information about the Go environment."}
	info.add("", 1, "version", runtime.Version())
	return append(out, info)
}
