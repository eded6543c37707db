package main_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
)

// benchRouter starts evokore over stdio with n fixture children (extra
// generated tools each) and returns the connected client session.
func benchRouter(b *testing.B, n, extra int, mode string) (*mcp.ClientSession, *exec.Cmd) {
	b.Helper()
	return benchRouterOf(b, testutil.Evokore(b), n, extra, mode)
}

// benchRouterOf is benchRouter with the binary to start: the tree's own
// build, or an older one measured in the same rounds.
func benchRouterOf(b *testing.B, bin string, n, extra int, mode string) (*mcp.ClientSession, *exec.Cmd) {
	b.Helper()
	dir := b.TempDir()
	fx := testutil.FixtureServer(b)
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("c%d", i)] = map[string]any{"command": fx, "args": []string{"-extra", strconv.Itoa(extra)}}
	}
	testutil.WriteJSON(b, dir, "mcp.config.json", map[string]any{"servers": servers})
	cmd := exec.Command(bin, "serve")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"), "EVOKORE_TOOL_DISCOVERY_MODE=" + mode}
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs, cmd
}

// waitTool polls tools/list until name appears.
func waitTool(b *testing.B, cs *mcp.ClientSession, name string) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range res.Tools {
			if t.Name == name {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.Fatalf("%s never appeared", name)
}

// BenchmarkInitializeWith4Children measures spawn → initialize answered
// and spawn → first tools/list answered, with four children configured
// (they boot after the handshake), alternating with the builds
// -init-compare names each iteration so a noisy machine weighs on all
// alike. Each build is spawned twice per iteration: with a fresh
// EVOKORE_HOME (a first start) and with a returning user's home, one an
// earlier run of that build left its manifest cache and tool pins in.
func BenchmarkInitializeWith4Children(b *testing.B) {
	fx := testutil.FixtureServer(b)
	dir := b.TempDir()
	servers := map[string]any{}
	for i := range 4 {
		servers[fmt.Sprintf("c%d", i)] = map[string]any{"command": fx, "args": []string{}}
	}
	testutil.WriteJSON(b, dir, "mcp.config.json", map[string]any{"servers": servers})
	type build struct{ name, path, home string }
	bins := []build{{name: "evokore", path: testutil.Evokore(b)}}
	// -init-compare adds other builds to the same spawns, as
	// name=path,...: an older evokore, or a front that execs one.
	for _, kv := range strings.Split(*initCompare, ",") {
		if name, path, ok := strings.Cut(kv, "="); ok {
			bins = append(bins, build{name: name, path: path})
		}
	}
	// Every build also starts with a returning user's home.
	for _, bin := range slices.Clone(bins) {
		bin.home = returningHome(b, bin.path, dir)
		bins = append(bins, bin)
	}
	env := func(home string) []string {
		return []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + home}
	}
	initLat, listLat := make([][]time.Duration, len(bins)), make([][]time.Duration, len(bins))
	for b.Loop() {
		for i, bin := range bins {
			cmd := exec.Command(bin.path)
			cmd.Dir = dir
			home := bin.home
			if home == "" {
				home = b.TempDir()
			}
			cmd.Env = env(home)
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			start := time.Now()
			cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				b.Fatal(err)
			}
			initLat[i] = append(initLat[i], time.Since(start))
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
			listLat[i] = append(listLat[i], time.Since(start))
			_ = cs.Close()
		}
	}
	label := func(bin build) string {
		if bin.home != "" {
			return bin.name + "-returning"
		}
		return bin.name
	}
	for i, bin := range bins {
		reportPercentiles(b, "init-"+label(bin), initLat[i])
		reportPercentiles(b, "list-"+label(bin), listLat[i])
	}
	for i := 1; i < len(bins); i++ {
		b.ReportMetric(float64(percentile(initLat[i], 50))/float64(percentile(initLat[0], 50)), "init-"+label(bins[i])+"/evokore")
		b.ReportMetric(float64(percentile(listLat[i], 50))/float64(percentile(listLat[0], 50)), "list-"+label(bins[i])+"/evokore")
	}
	if *initReport != "" {
		var md strings.Builder
		fmt.Fprintf(&md, "%d spawns of each build and home, alternating; Go SDK client (2025-11-25), 4 fixture children configured (they boot after the handshake); a fresh EVOKORE_HOME per spawn, or a returning user's home (the manifest cache and tool pins an earlier run left). Ratios are to the same build's fresh home.\n\n", len(initLat[0]))
		md.WriteString("| build | home | initialize p50 ms | p99 ms | first tools/list p50 ms | p99 ms | tools/list ÷ fresh |\n|---|---|---|---|---|---|---|\n")
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		half := len(bins) / 2
		for i, bin := range bins {
			home, fresh := "fresh", i
			if bin.home != "" {
				home, fresh = "returning", i-half
			}
			fmt.Fprintf(&md, "| %s | %s | %.1f | %.1f | %.1f | %.1f | %.2f |\n", bin.name, home,
				ms(percentile(initLat[i], 50)), ms(percentile(initLat[i], 99)), ms(percentile(listLat[i], 50)), ms(percentile(listLat[i], 99)),
				float64(percentile(listLat[i], 50))/float64(percentile(listLat[fresh], 50)))
		}
		if err := os.WriteFile(*initReport, []byte(md.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// returningHome runs bin once in dir with a home of its own until every
// child's tool list is cached there and the tools are pinned, and returns
// that home: what a returning user starts with.
func returningHome(b *testing.B, bin, dir string) string {
	b.Helper()
	home := b.TempDir()
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + home}
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		cached, _ := filepath.Glob(filepath.Join(home, "manifests", "*.json"))
		if _, err := os.Stat(filepath.Join(home, "pins.json")); err == nil && len(cached) == 4 {
			return home
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s cached %d of 4 manifests in %s", bin, len(cached), home)
		}
	}
}

var initReport = flag.String("init-report", "", "BenchmarkInitializeWith4Children: also write the table as markdown to this file (make bench-report)")

var initCompare = flag.String("init-compare", "", "BenchmarkInitializeWith4Children: other binaries to spawn in the same rounds, name=path,...")

// BenchmarkProxiedCallOverhead runs 1,000 sequential echo calls from the
// same Go client, directly against a Go child and through evokore, and
// reports p50/p99 of each and their ratio.
func BenchmarkProxiedCallOverhead(b *testing.B) {
	const calls = 1000
	args := map[string]any{"message": "a longer benchmark message"}
	measure := func(cs *mcp.ClientSession, tool string) []time.Duration {
		for range 50 {
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
		lat := make([]time.Duration, 0, calls)
		for range calls {
			start := time.Now()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
			lat = append(lat, time.Since(start))
			if err != nil || res.IsError {
				b.Fatalf("%s: %v %v", tool, err, res)
			}
		}
		return lat
	}

	direct := exec.Command(testutil.FixtureServer(b))
	dc, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: direct}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer dc.Close()
	ec, _ := benchRouter(b, 1, 0, "legacy")
	waitTool(b, ec, "c0_echo")

	var d, e []time.Duration
	for b.Loop() {
		d = append(d, measure(dc, "echo")...)
		e = append(e, measure(ec, "c0_echo")...)
	}
	dp50, dp99 := percentile(d, 50), percentile(d, 99)
	ep50, ep99 := percentile(e, 50), percentile(e, 99)
	b.ReportMetric(float64(dp50.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(dp99.Microseconds()), "direct-p99-µs")
	b.ReportMetric(float64(ep50.Microseconds()), "evokore-p50-µs")
	b.ReportMetric(float64(ep99.Microseconds()), "evokore-p99-µs")
	b.ReportMetric(float64(ep50)/float64(dp50), "p50-ratio")
	b.ReportMetric(float64(ep99)/float64(dp99), "p99-ratio")
}

// BenchmarkRouterMemoryWith4Children reports what the router's own
// processes cost in memory with four fixture children: evokore and its
// watchdog (the process that kills what the router started should the
// router be SIGKILLed), apart and together, idle once the children booted
// and the start settled, and again after a burst of calls (400 proxied
// calls 16 at a time, tool and skill searches). It reports PSS and
// private memory, not RSS: RSS counts every clean page of the binary the
// process touched, pages the kernel shares through its page cache and may
// drop at any time, and counts the ones both processes map twice. PSS
// divides each page among the processes that map it; private memory is
// what the router alone holds and the kernel cannot drop without swap.
// -mem-compare starts other builds in the same rounds, alternating.
func BenchmarkRouterMemoryWith4Children(b *testing.B) {
	type build struct{ name, path string }
	bins := []build{{"evokore", testutil.Evokore(b)}}
	for _, kv := range strings.Split(*memCompare, ",") {
		if name, path, ok := strings.Cut(kv, "="); ok {
			bins = append(bins, build{name, path})
		}
	}
	// samples[build][phase] holds one reading per start.
	samples := make([][2][]memSample, len(bins))
	for b.Loop() {
		for i, bin := range bins {
			cs, cmd := benchRouterOf(b, bin.path, 4, 0, "legacy")
			for i := range 4 {
				waitTool(b, cs, fmt.Sprintf("c%d_echo", i))
			}
			time.Sleep(memIdle)
			samples[i][0] = append(samples[i][0], readMemory(b, cmd.Process.Pid))
			memBurst(b, cs)
			samples[i][1] = append(samples[i][1], readMemory(b, cmd.Process.Pid))
			_ = cs.Close()
		}
	}
	med := func(i, phase int, f func(memSample) float64) float64 {
		v := make([]float64, 0, len(samples[i][phase]))
		for _, s := range samples[i][phase] {
			v = append(v, f(s))
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	// ratio is the median over rounds of build i's together-private
	// memory after the burst over the first build's in the same round.
	ratio := func(i int) float64 {
		v := make([]float64, len(samples[i][1]))
		for r, s := range samples[i][1] {
			v[r] = s.private() / samples[0][1][r].private()
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	for i, bin := range bins {
		prefix := ""
		if i > 0 {
			prefix = bin.name + "-"
		}
		for phase, name := range memPhases {
			b.ReportMetric(med(i, phase, memSample.private), prefix+name+"-private-MiB")
			b.ReportMetric(med(i, phase, memSample.pss), prefix+name+"-pss-MiB")
			b.ReportMetric(med(i, phase, memSample.pssFile), prefix+name+"-pss-file-MiB")
		}
		b.ReportMetric(med(i, 1, func(s memSample) float64 { return s.dog.private }), prefix+"watchdog-private-MiB")
		if i > 0 {
			b.ReportMetric(ratio(i), "private-"+bin.name+"/evokore")
		}
	}
	if *memReport == "" {
		return
	}
	var md strings.Builder
	fmt.Fprintf(&md, "Medians of %d starts of each build over stdio, alternating, 4 fixture children; idle %s after they booted, then after a burst of 400 proxied calls 16 at a time and 40 tool and skill searches. PSS divides each page among the processes that map it (the router and its watchdog map the same binary); its file-backed part is pages of the binary, which stay in the kernel's page cache whether mapped or not; private is anonymous memory and private dirty pages (the heap, stacks, runtime metadata), what no other process shares and the kernel cannot drop without swap. RSS is not a cost: it counts clean pages of the binary, which are the kernel's page cache. The children's own memory is not counted.", len(samples[0][0]), memIdle)
	if len(bins) > 1 {
		md.WriteString(" `÷ evokore` is the median over rounds of a build's together-private memory after the burst over this tree's in the same round.")
	}
	md.WriteString("\n\n| build | process | idle PSS MiB | of it file-backed | idle private MiB | after the burst PSS MiB | of it file-backed | after the burst private MiB |\n|---|---|---|---|---|---|---|---|\n")
	for i, bin := range bins {
		for _, p := range []struct {
			name string
			of   func(memSample) procMemory
		}{
			{"router", func(s memSample) procMemory { return s.router }},
			{"watchdog", func(s memSample) procMemory { return s.dog }},
			{"together", func(s memSample) procMemory { return procMemory{s.pss(), s.pssFile(), s.private()} }},
		} {
			note := ""
			if i > 0 && p.name == "together" {
				note = fmt.Sprintf(" (%.2f ÷ evokore)", ratio(i))
			}
			cells := []float64{}
			for phase := range memPhases {
				cells = append(cells, med(i, phase, func(s memSample) float64 { return p.of(s).pss }),
					med(i, phase, func(s memSample) float64 { return p.of(s).pssFile }),
					med(i, phase, func(s memSample) float64 { return p.of(s).private }))
			}
			fmt.Fprintf(&md, "| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f%s |\n", bin.name, p.name,
				cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], note)
		}
	}
	if err := os.WriteFile(*memReport, []byte(md.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

var memReport = flag.String("mem-report", "", "BenchmarkRouterMemoryWith4Children: also write the table as markdown to this file (make bench-report)")

var memCompare = flag.String("mem-compare", "", "BenchmarkRouterMemoryWith4Children: other binaries to start in the same rounds, name=path,...")

// memIdle is how long the router idles after its children booted before
// it is measured: past the end of its start (gcpolicy's settleAfter).
const memIdle = 3 * time.Second

// memPhases names the two readings of a start.
var memPhases = [2]string{"idle", "burst"}

// memBurst is the burst of calls the second reading follows: 400
// proxied calls, 16 at a time, then tool and skill searches (they read
// the search indexes and the word vector table).
func memBurst(b *testing.B, cs *mcp.ClientSession) {
	b.Helper()
	errs := make(chan error, 16)
	for w := range 16 {
		go func() {
			var err error
			for i := range 25 {
				if err == nil {
					_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: fmt.Sprintf("c%d_echo", (w+i)%4), Arguments: map[string]any{"message": "m"}})
				}
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	queries := []string{"echo a message", "write a letter to my landlord", "review a pull request", "read a file", "send an email", "merge pdf files", "take a screenshot", "deploy the service", "search the web", "summarise a document", "translate text", "query a database", "resize an image", "schedule a meeting", "track a bug", "play a song", "book a flight", "compress a folder", "fetch a url", "count words"}
	for _, q := range queries {
		for _, tool := range []string{"discover_tools", "search_skills"} {
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"query": q}}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// procMemory is one process's PSS, the file-backed part of it, and its
// private memory, in MiB.
type procMemory struct{ pss, pssFile, private float64 }

// memSample is one reading of the router and its watchdog.
type memSample struct{ router, dog procMemory }

func (s memSample) pss() float64     { return s.router.pss + s.dog.pss }
func (s memSample) pssFile() float64 { return s.router.pssFile + s.dog.pssFile }
func (s memSample) private() float64 { return s.router.private + s.dog.private }

// readMemory reads the router pid and its watchdog.
func readMemory(b *testing.B, pid int) memSample {
	b.Helper()
	s := memSample{router: memoryOf(b, pid)}
	if w := watchdogOf(pid); w != 0 {
		s.dog = memoryOf(b, w)
	}
	return s
}

// memoryOf reads a process's memory, skipping the benchmark where the
// kernel has no smaps_rollup.
func memoryOf(b *testing.B, pid int) procMemory {
	b.Helper()
	m, err := smapsMemory(pid)
	if err != nil {
		b.Skipf("no smaps_rollup: %v", err)
	}
	return m
}

// smapsMemory reads /proc/<pid>/smaps_rollup. Private memory is the
// larger of Anonymous and Private_Dirty: the two are nearly one set (a
// written page of a private file mapping becomes anonymous), so their sum
// would count most pages twice.
func smapsMemory(pid int) (procMemory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return procMemory{}, err
	}
	kb := map[string]float64{}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			n, _ := strconv.Atoi(f[1])
			kb[f[0]] = float64(n)
		}
	}
	return procMemory{pss: kb["Pss:"] / 1024, pssFile: kb["Pss_File:"] / 1024, private: max(kb["Anonymous:"], kb["Private_Dirty:"]) / 1024}, nil
}

// watchdogOf is the pid of the router's watchdog: the child of pid named
// evokore-watchdog (as the kernel keeps it, 15 bytes); 0 when there is
// none.
func watchdogOf(pid int) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		data, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(data)) {
			comm, _ := os.ReadFile("/proc/" + f + "/comm")
			if strings.TrimSpace(string(comm)) == "evokore-watchdo" {
				c, _ := strconv.Atoi(f)
				return c
			}
		}
	}
	return 0
}

// BenchmarkToolsList1000Proxied measures tools/list through evokore when
// one child serves 1,000 tools (legacy mode lists them all).
func BenchmarkToolsList1000Proxied(b *testing.B) {
	cs, _ := benchRouter(b, 1, 1000, "legacy")
	waitTool(b, cs, "c0_generated_0999")
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := cs.ListTools(context.Background(), nil)
		lat = append(lat, time.Since(start))
		if err != nil || len(res.Tools) < 1000 {
			b.Fatalf("list: %v (%d tools)", err, len(res.Tools))
		}
	}
	reportPercentiles(b, "list", lat)
}

func percentile(lat []time.Duration, p int) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	i := (len(s)*p+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

func reportPercentiles(b *testing.B, name string, lat []time.Duration) {
	b.ReportMetric(float64(percentile(lat, 50).Microseconds())/1000, name+"-p50-ms")
	b.ReportMetric(float64(percentile(lat, 99).Microseconds())/1000, name+"-p99-ms")
}
