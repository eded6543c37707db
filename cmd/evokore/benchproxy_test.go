package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/testutil"
)

// The proxy benchmark's knobs: `make bench-proxy` passes them.
var (
	proxyRounds  = flag.Int("proxy-rounds", 5, "BenchmarkProxyTable: interleaved rounds")
	proxyCalls   = flag.Int("proxy-calls", 1000, "BenchmarkProxyTable: calls per phase and round")
	proxyBase    = flag.String("proxy-base", "", "BenchmarkProxyTable: other evokore binaries (an older build; a copy of this one for an A/A) to measure in the same rounds: path, or name=path,... (the first unnamed one is \"base\")")
	proxyAA      = flag.Bool("proxy-aa", false, "BenchmarkProxyTable: measure this build a second time as evokore-aa in the same rounds, an A/A whose ratio to evokore is the spread the machine gives a ratio")
	proxyReport  = flag.String("proxy-report", "", "BenchmarkProxyTable: also write the table as markdown to this file (make bench-report)")
	proxyClients = flag.String("proxy-clients", "ts-sdk,line", "BenchmarkProxyTable: the clients to measure with, comma-separated: ts-sdk (the TypeScript SDK's client, as issue 15's targets were set), line (a raw JSON-RPC line client)")
)

// BenchmarkProxyTable reproduces the proxy-cost table of issue 15 in one
// run: for each child (the npm server-everything and the Go fixture), it
// calls echo directly, through a minimal Go line relay (the floor of a
// stdio proxy written in Go), through a C byte relay (the floor of any
// stdio proxy: issue 15's first row; built from testdata/crelay with the
// cc on PATH, and left out when there is none) and through evokore, from
// two clients: the TypeScript
// SDK's own client (testdata/npm/bench-client.mjs), which is how the
// issue's table and targets were measured, and a raw JSON-RPC line client
// (one request per line, read back by id), whose own cost per call is a
// few µs. A client's cost is in every latency it measures, direct
// included, so the same proxy shows a smaller ratio under the slower
// client: the line client's ratios are the proxy's cost laid bare, the
// SDK client's are what a user of that client sees.
//
// Each round runs every target in turn (interleaved, so a noisy neighbour
// hits all of them alike): 1,000 sequential calls for p50/p99, then 1,000
// calls kept 16 in flight for throughput. Ratios are taken per round
// against direct (and, for p50, against the relay) and the median over
// rounds is printed. CPU per call is the proxy process's utime+stime from
// /proc/<pid>/stat over both phases; allocations per call come from
// evokore's EVOKORE_DEBUG_MEMSTATS probe; private memory (see memoryOf)
// is read after the last round. With -proxy-base, an older evokore build (one that has the
// EVOKORE_DEBUG_MEMSTATS probe) is measured in the same rounds as "base",
// for before/after figures from one run, and evokore ÷ base is printed
// per child as the median of each round's ratio.
func BenchmarkProxyTable(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("needs /proc for CPU and memory")
	}
	fx := testutil.FixtureServer(b)
	relay := testutil.Build(b, "./internal/testutil/linerelay", "linerelay")
	crelay := buildCRelay(b)
	bin := testutil.Evokore(b)
	everything := testutil.NPMServer(b, "server-everything")
	children := []struct {
		name string
		argv []string
	}{
		{"server-everything", []string{"node", everything, "stdio"}},
		{"go-echo", []string{fx}},
	}
	type target struct {
		client, child, kind string
		c                   benchClient
		tool                string
		memFile             string
		rounds              []roundResult
	}
	args := `{"message":"a longer benchmark message"}`
	var targets []*target
	for _, client := range strings.Split(*proxyClients, ",") {
		var start func(b *testing.B, argv, env []string, dir string) benchClient
		switch client {
		case "line":
			start = startLineClient
		case "ts-sdk":
			script := testutil.TSClientScript(b)
			start = func(b *testing.B, argv, env []string, dir string) benchClient {
				return startSDKClient(b, script, argv, env, dir)
			}
		default:
			b.Fatalf("-proxy-clients: unknown client %q", client)
		}
		for _, ch := range children {
			direct := &target{client: client, child: ch.name, kind: "direct", tool: "echo"}
			direct.c = start(b, ch.argv, nil, "")
			relayed := &target{client: client, child: ch.name, kind: "go-relay", tool: "echo"}
			relayed.c = start(b, append([]string{relay}, ch.argv...), nil, "")
			targets = append(targets, direct, relayed)
			if crelay != "" {
				floor := &target{client: client, child: ch.name, kind: "c-relay", tool: "echo"}
				floor.c = start(b, append([]string{crelay}, ch.argv...), nil, "")
				targets = append(targets, floor)
			}
			// router starts an evokore build in front of the child, with
			// env added to the benchmark's own settings.
			router := func(kind, binary string, env ...string) *target {
				dir := b.TempDir()
				testutil.WriteJSON(b, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
					"c": map[string]any{"command": ch.argv[0], "args": ch.argv[1:]},
				}})
				t := &target{client: client, child: ch.name, kind: kind, tool: "c_echo", memFile: filepath.Join(dir, "memstats.jsonl")}
				env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"),
					"EVOKORE_TOOL_DISCOVERY_MODE=legacy", "EVOKORE_DEBUG_MEMSTATS=" + t.memFile}, env...)
				t.c = start(b, []string{binary, "serve"}, env, dir)
				t.c.wait(b, t.tool, args)
				return t
			}
			var profile []string
			if prof := os.Getenv("EVOKORE_DEBUG_CPUPROFILE"); prof != "" {
				// Profiles of the router under load: go tool pprof <file>.
				profile = []string{"EVOKORE_DEBUG_CPUPROFILE=" + prof + "." + client + "." + ch.name}
			}
			targets = append(targets, router("evokore", bin, profile...),
				// The same router with the operator records (audit log,
				// session replay) off: what they cost per call is the
				// difference.
				router("evokore-norec", bin, "EVOKORE_AUDIT_LOG=false", "EVOKORE_SESSION_REPLAY=false"))
			for _, base := range baseBuilds(bin) {
				// PROXY_BASE_ENV="GOGC=100 GOMAXPROCS=2", say: the same
				// build with other runtime settings.
				targets = append(targets, router(base.name, base.path, strings.Fields(os.Getenv("PROXY_BASE_ENV"))...))
			}
		}
	}
	for _, t := range targets {
		if l, ok := t.c.(interface{ setLabel(string) }); ok {
			l.setLabel(t.client + " " + t.child + " " + t.kind)
		}
		t.c.calls(b, t.tool, args, 50, 1) // warm-up
	}
	for b.Loop() {
		for range *proxyRounds {
			for _, t := range targets {
				t.rounds = append(t.rounds, round(b, t.c, t.tool, args, *proxyCalls, t.memFile))
			}
		}
	}

	// versus holds evokore's ratios to the other builds, for the report.
	var out, md, versus strings.Builder
	fmt.Fprintf(&out, "\nproxy benchmark: %d rounds × %d calls, echo %s\n", *proxyRounds, *proxyCalls, args)
	fmt.Fprintf(&md, "%d interleaved rounds × %d sequential calls of `echo %s`, then %d more 16 at a time; medians over the rounds; ratios per round to `direct` (the client calling the child itself) and to the Go line relay.\n", *proxyRounds, *proxyCalls, args, *proxyCalls*2)
	mdHeader := "| child | path | p50 µs | p99 µs | p50 ÷ direct | p99 ÷ direct | p50 ÷ relay | 16 in flight, calls/s | ÷ direct | proxy CPU µs/call | KB/call | allocs/call | private MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
	header := fmt.Sprintf("%-18s %-13s %9s %9s %8s %8s %8s %9s %8s %10s %8s %9s %10s %8s\n",
		"child", "path", "p50 µs", "p99 µs", "p50÷dir", "p99÷dir", "p50÷rel", "calls/s16", "÷dir", "CPU µs/call", "syscalls", "KB/call", "allocs/call", "private MiB")
	per := len(targets) / len(children) / len(strings.Split(*proxyClients, ","))
	for i := 0; i < len(targets); i += per {
		direct, relayed := targets[i], targets[i+1]
		if i%(per*len(children)) == 0 {
			fmt.Fprintf(&out, "\nclient: %s\n%s", clientTitle[direct.client], header)
			fmt.Fprintf(&md, "\nClient: %s.\n\n%s", clientTitle[direct.client], mdHeader)
		}
		for _, t := range targets[i : i+per] {
			var p50r, p99r, relr, tpr []float64
			for k, r := range t.rounds {
				d := direct.rounds[k]
				p50r = append(p50r, float64(r.p50)/float64(d.p50))
				p99r = append(p99r, float64(r.p99)/float64(d.p99))
				relr = append(relr, float64(r.p50)/float64(relayed.rounds[k].p50))
				tpr = append(tpr, r.perSec/d.perSec)
			}
			med := func(f func(roundResult) float64) float64 {
				var v []float64
				for _, r := range t.rounds {
					v = append(v, f(r))
				}
				return median(v)
			}
			cpu, sys := "-", "-"
			if t.kind != "direct" {
				cpu = fmt.Sprintf("%.0f", med(func(r roundResult) float64 { return r.cpuPerCall }))
				sys = fmt.Sprintf("%.1f", med(func(r roundResult) float64 { return r.syscallsPerCall }))
			}
			kb, allocs := "-", "-"
			if t.memFile != "" {
				kb = fmt.Sprintf("%.1f", med(func(r roundResult) float64 { return r.bytesPerCall })/1024)
				allocs = fmt.Sprintf("%.0f", med(func(r roundResult) float64 { return r.mallocsPerCall }))
			}
			fmt.Fprintf(&out, "%-18s %-13s %9.0f %9.0f %8.2f %8.2f %8.2f %9.0f %8.2f %10s %8s %9s %10s %8.1f\n",
				t.child, t.kind,
				med(func(r roundResult) float64 { return float64(r.p50.Microseconds()) }),
				med(func(r roundResult) float64 { return float64(r.p99.Microseconds()) }),
				median(p50r), median(p99r), median(relr),
				med(func(r roundResult) float64 { return r.perSec }), median(tpr),
				cpu, sys, kb, allocs, privateOf(t.c.pid()))
			fmt.Fprintf(&md, "| %s | %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.0f | %.2f | %s | %s | %s | %.1f |\n",
				t.child, t.kind,
				med(func(r roundResult) float64 { return float64(r.p50.Microseconds()) }),
				med(func(r roundResult) float64 { return float64(r.p99.Microseconds()) }),
				median(p50r), median(p99r), median(relr),
				med(func(r roundResult) float64 { return r.perSec }), median(tpr),
				cpu, kb, allocs, privateOf(t.c.pid()))
			if t.kind == "evokore" {
				tag := t.client + "-" + strings.TrimPrefix(t.child, "server-")
				b.ReportMetric(median(p50r), tag+"-p50÷direct")
				b.ReportMetric(median(p99r), tag+"-p99÷direct")
				b.ReportMetric(median(tpr), tag+"-inflight÷direct")
			}
		}
		// evokore against each other build: the median of each round's
		// ratio, so the box's drift between rounds cancels; CPU's range
		// over the rounds too, which an A/A (a copy of this build) reads
		// as the spread.
		var now *target
		for _, t := range targets[i : i+per] {
			if t.kind == "evokore" {
				now = t
			}
		}
		for _, base := range baseBuilds(bin) {
			var o *target
			for _, t := range targets[i : i+per] {
				if t.kind == base.name {
					o = t
				}
			}
			p50, p99, tp, cpu := perRound(now.rounds, o.rounds)
			fmt.Fprintf(&out, "%-18s evokore ÷ %s, per round: p50 %.2f, p99 %.2f, 16 in flight %.2f, CPU %.2f (rounds %.2f–%.2f)\n",
				now.child, base.name, median(p50), median(p99), median(tp), median(cpu), slices.Min(cpu), slices.Max(cpu))
			fmt.Fprintf(&versus, "| %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f–%.2f |\n",
				now.client, now.child, base.name, median(p50), median(p99), median(tp), median(cpu), slices.Min(cpu), slices.Max(cpu))
		}
	}
	fmt.Print(out.String())
	if versus.Len() > 0 {
		md.WriteString("\nevokore ÷ the other builds measured in the same rounds: the median of each round's ratio (`evokore-aa` is this build again, an A/A: how far from 1.00 the machine alone moves a ratio); proxy CPU per call also as its range over the rounds.\n\n| client | child | ÷ | p50 | p99 | 16 in flight, calls/s | proxy CPU µs/call | CPU, rounds |\n|---|---|---|---|---|---|---|---|\n")
		md.WriteString(versus.String())
	}
	if *proxyReport != "" {
		if err := os.WriteFile(*proxyReport, []byte(md.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// perRound is each round's ratio of a's figures to b's: p50, p99, calls
// per second 16 in flight, and CPU per call.
func perRound(a, b []roundResult) (p50, p99, tp, cpu []float64) {
	for k, r := range a {
		o := b[k]
		p50 = append(p50, float64(r.p50)/float64(o.p50))
		p99 = append(p99, float64(r.p99)/float64(o.p99))
		tp = append(tp, r.perSec/o.perSec)
		cpu = append(cpu, r.cpuPerCall/o.cpuPerCall)
	}
	return p50, p99, tp, cpu
}

// baseBuilds are the builds -proxy-base names, in its order, then with
// -proxy-aa this build (bin) again as evokore-aa.
func baseBuilds(bin string) []struct{ name, path string } {
	var out []struct{ name, path string }
	for _, kv := range strings.Split(*proxyBase, ",") {
		if kv == "" {
			continue
		}
		name, path, ok := strings.Cut(kv, "=")
		if !ok {
			name, path = "base", kv
		}
		out = append(out, struct{ name, path string }{name, path})
	}
	if *proxyAA {
		out = append(out, struct{ name, path string }{"evokore-aa", bin})
	}
	return out
}

// clientTitle names each client in the printed table.
var clientTitle = map[string]string{
	"ts-sdk": "the TypeScript SDK's Client over StdioClientTransport (how issue 15's table was measured)",
	"line":   "a raw JSON-RPC line client (the proxy's own cost, little client cost on top)",
}

// benchClient drives one target process: the server itself (direct) or
// the proxy in front of it.
type benchClient interface {
	// pid is the target process, whose CPU and memory are read.
	pid() int
	// wait returns once a call of tool succeeds (a router's child is up).
	wait(b *testing.B, tool, args string)
	// calls makes n calls of tool, inflight at a time. With one at a
	// time it returns each call's latency; otherwise the time for all.
	calls(b *testing.B, tool, args string, n, inflight int) ([]time.Duration, time.Duration)
}

// roundResult is one target's measurements in one round.
type roundResult struct {
	p50, p99   time.Duration
	perSec     float64
	cpuPerCall float64 // µs of the target process
	// syscallsPerCall counts the target's read and write system calls
	// (/proc/<pid>/io): a relay's floor is about four.
	syscallsPerCall float64
	bytesPerCall    float64
	mallocsPerCall  float64
}

// round runs the sequential and the 16-in-flight phase.
func round(b *testing.B, c benchClient, tool, args string, n int, memFile string) roundResult {
	var r roundResult
	pid := c.pid()
	cpu0 := cpuTicks(b, pid)
	sys0 := syscallCount(b, pid)
	var mem0 memProbe
	if memFile != "" {
		mem0 = probeMem(b, pid, memFile)
	}
	lat, _ := c.calls(b, tool, args, n, 1)
	slices.Sort(lat)
	r.p50, r.p99 = lat[(len(lat)*50+99)/100-1], lat[(len(lat)*99+99)/100-1]
	_, took := c.calls(b, tool, args, n, 16)
	r.perSec = float64(n) / took.Seconds()
	calls := float64(2 * n)
	r.cpuPerCall = float64(cpuTicks(b, pid)-cpu0) * 1e6 / clockTicks / calls
	r.syscallsPerCall = float64(syscallCount(b, pid)-sys0) / calls
	if memFile != "" {
		mem1 := probeMem(b, pid, memFile)
		r.bytesPerCall = float64(mem1.TotalAlloc-mem0.TotalAlloc) / calls
		r.mallocsPerCall = float64(mem1.Mallocs-mem0.Mallocs) / calls
	}
	return r
}

// buildCRelay compiles testdata/crelay/crelay.c with the C compiler on
// PATH and returns the program; "" when there is none, and the table
// goes without the c-relay row.
func buildCRelay(b *testing.B) string {
	b.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		b.Log("no C compiler (cc) on PATH: the table has no c-relay row")
		return ""
	}
	out := filepath.Join(b.TempDir(), "crelay")
	src := filepath.Join(testutil.Root(b), "testdata", "crelay", "crelay.c")
	if msg, err := exec.Command(cc, "-O2", "-pthread", "-o", out, src).CombinedOutput(); err != nil {
		b.Fatalf("building the C relay: %v\n%s", err, msg)
	}
	return out
}

// startPiped starts argv in dir with env (nil: the benchmark's own) and
// returns its stdin and stdout; stderr may be nil (discarded). When the
// benchmark ends, its stdin is closed and it is killed if it has not gone
// in 5 s.
func startPiped(b *testing.B, argv, env []string, dir string, stderr io.Writer) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stderr = env, dir, stderr
	if env == nil {
		cmd.Env = os.Environ()
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return cmd, in, bufio.NewReaderSize(out, 1<<20)
}

// lineClient is a raw JSON-RPC client over a process's stdio.
type lineClient struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	br   *bufio.Reader
	next int
	// label names the target in a failure, with what the target wrote
	// on stderr last (a router's log), so a failed round says whose it was.
	label  string
	stderr *tailWriter
}

func (c *lineClient) setLabel(label string) { c.label = label }

// fatalf fails the benchmark naming the target and its last log lines.
func (c *lineClient) fatalf(b *testing.B, format string, args ...any) {
	b.Helper()
	if c.stderr != nil {
		// A target that ended may still have log lines on their way.
		exited := make(chan struct{})
		go func() { _ = c.cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(2 * time.Second):
		}
	}
	b.Fatalf("%s: %s\n%s", c.label, fmt.Sprintf(format, args...), c.stderr.String())
}

// tailWriter keeps the last 4 KiB written to it.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if over := len(w.buf) - 4096; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

func startLineClient(b *testing.B, argv, env []string, dir string) benchClient {
	b.Helper()
	var stderr *tailWriter
	var w io.Writer
	if dir != "" { // a router: its log is kept for a failure
		stderr = &tailWriter{}
		w = stderr
	}
	cmd, in, out := startPiped(b, argv, env, dir, w)
	c := &lineClient{cmd: cmd, in: in, br: out, stderr: stderr, label: strings.Join(argv, " ")}
	c.request(b, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench-proxy","version":"1"}}`)
	c.write(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *lineClient) pid() int { return c.cmd.Process.Pid }

func (c *lineClient) write(b *testing.B, line string) {
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		b.Fatal(err)
	}
}

// send writes a request and returns its id.
func (c *lineClient) send(b *testing.B, method, params string) int {
	c.next++
	c.write(b, `{"jsonrpc":"2.0","id":`+strconv.Itoa(c.next)+`,"method":"`+method+`","params":`+params+`}`)
	return c.next
}

// response reads lines until a response arrives and returns its id and
// result; notifications are skipped.
func (c *lineClient) response(b *testing.B) (int, json.RawMessage) {
	for {
		line, err := c.br.ReadBytes('\n')
		if err != nil {
			c.fatalf(b, "reading: %v", err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			c.fatalf(b, "bad line %q: %v", line, err)
		}
		if m.Method != "" || m.ID == nil {
			continue
		}
		if m.Error != nil {
			c.fatalf(b, "error answer: %s", line)
		}
		id, _ := strconv.Atoi(string(m.ID))
		return id, m.Result
	}
}

func (c *lineClient) request(b *testing.B, method, params string) json.RawMessage {
	id := c.send(b, method, params)
	got, res := c.response(b)
	if got != id {
		c.fatalf(b, "answer to %d, want %d", got, id)
	}
	return res
}

// wait polls tools/list until the tool is listed.
func (c *lineClient) wait(b *testing.B, tool, _ string) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if bytes.Contains(c.request(b, "tools/list", `{}`), []byte(`"name":"`+tool+`"`)) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.fatalf(b, "%s never appeared", tool)
}

func (c *lineClient) calls(b *testing.B, tool, args string, n, inflight int) ([]time.Duration, time.Duration) {
	params := `{"name":"` + tool + `","arguments":` + args + `}`
	if inflight <= 1 {
		lat := make([]time.Duration, 0, n)
		for range n {
			start := time.Now()
			if res := c.request(b, "tools/call", params); bytes.Contains(res, []byte(`"isError":true`)) {
				c.fatalf(b, "%s: %s", tool, res)
			}
			lat = append(lat, time.Since(start))
		}
		return lat, 0
	}
	start := time.Now()
	sent, got := 0, 0
	for ; sent < inflight && sent < n; sent++ {
		c.send(b, "tools/call", params)
	}
	for got < n {
		c.response(b)
		got++
		if sent < n {
			c.send(b, "tools/call", params)
			sent++
		}
	}
	return nil, time.Since(start)
}

// sdkClient is the TypeScript SDK's client, driven through
// testdata/npm/bench-client.mjs, which starts the target itself.
type sdkClient struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	br     *bufio.Reader
	target int
}

func startSDKClient(b *testing.B, script string, argv, env []string, dir string) benchClient {
	b.Helper()
	// The driver's own failures reach the benchmark's stderr; the
	// target's log does not (bench-client.mjs ignores it).
	cmd, in, out := startPiped(b, append([]string{"node", script}, argv...), env, dir, os.Stderr)
	c := &sdkClient{cmd: cmd, in: in, br: out}
	var hello struct{ PID int }
	c.answer(b, &hello)
	if hello.PID == 0 {
		b.Fatal("bench-client.mjs reported no server pid")
	}
	c.target = hello.PID
	return c
}

func (c *sdkClient) pid() int { return c.target }

// do sends one command and decodes its answer into v.
func (c *sdkClient) do(b *testing.B, cmd map[string]any, v any) {
	line, err := json.Marshal(cmd)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.in.Write(append(line, '\n')); err != nil {
		b.Fatal(err)
	}
	c.answer(b, v)
}

func (c *sdkClient) answer(b *testing.B, v any) {
	line, err := c.br.ReadBytes('\n')
	if err != nil {
		b.Fatalf("bench-client.mjs: %v", err)
	}
	var failed struct{ Error string }
	if json.Unmarshal(line, &failed) == nil && failed.Error != "" {
		b.Fatalf("bench-client.mjs: %s", failed.Error)
	}
	if err := json.Unmarshal(line, v); err != nil {
		b.Fatalf("bench-client.mjs: bad line %q: %v", line, err)
	}
}

func (c *sdkClient) wait(b *testing.B, tool, args string) {
	c.do(b, map[string]any{"op": "wait", "tool": tool, "args": json.RawMessage(args)}, &struct{}{})
}

func (c *sdkClient) calls(b *testing.B, tool, args string, n, inflight int) ([]time.Duration, time.Duration) {
	var res struct {
		Lat     []float64
		Seconds float64
	}
	c.do(b, map[string]any{"op": "calls", "tool": tool, "args": json.RawMessage(args), "n": n, "inflight": inflight}, &res)
	lat := make([]time.Duration, len(res.Lat))
	for i, us := range res.Lat {
		lat[i] = time.Duration(us * float64(time.Microsecond))
	}
	return lat, time.Duration(res.Seconds * float64(time.Second))
}

// syscallCount is the read and write system calls a process made.
func syscallCount(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && (k == "syscr" || k == "syscw") {
			c, _ := strconv.ParseInt(v, 10, 64)
			n += c
		}
	}
	return n
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// cpuTicks is utime+stime of a process, in clock ticks.
func cpuTicks(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name, which ends with the last ')'.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return ut + st
}

type memProbe struct {
	TotalAlloc uint64 `json:"totalAlloc"`
	Mallocs    uint64 `json:"mallocs"`
}

// probeMem asks evokore for its allocation counters (SIGUSR1) and waits
// for the line it appends.
func probeMem(b *testing.B, pid int, file string) memProbe {
	before := countLines(file)
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for countLines(file) == before {
		if time.Now().After(deadline) {
			b.Fatal("no memstats probe written")
		}
		time.Sleep(time.Millisecond)
	}
	data, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var m memProbe
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		b.Fatal(err)
	}
	return m
}

func countLines(file string) int {
	data, _ := os.ReadFile(file)
	return bytes.Count(data, []byte{'\n'})
}

// privateOf is a process's private memory in MiB (see memoryOf); 0 when
// it cannot be read.
func privateOf(pid int) float64 {
	m, err := smapsMemory(pid)
	if err != nil {
		return 0
	}
	return m.private
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
