package main_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// The churn benchmark's knobs: .ci/bench-report passes them.
var (
	churnSubjects = flag.Int("churn-subjects", 1000, "BenchmarkSubjectChurn: distinct subjects driven through the subject-scoped child")
	churnReport   = flag.String("churn-report", "", "BenchmarkSubjectChurn: also write the table as markdown to this file (make bench-report)")
)

// The churn's settings: instances idle past churnIdle are reaped while
// the churn goes on; churnMax is the router-wide cap (the default), which
// churnWorkers subjects at a time may reach when the machine is slow to
// reap; churnHold instances are held live to weigh the router's own
// memory per live instance (below the cap).
const (
	churnIdle    = 500 * time.Millisecond
	churnMax     = 64
	churnWorkers = 8
	churnHold    = 48
	// Leak tolerances, after the churn and the reap: the router's HTTP
	// server and runtime keep a few goroutines and descriptors that come
	// and go with timers and idle connections.
	churnGoroutineSlack = 8
	churnFDSlack        = 4
	// churnSampleSlack is how far one reading of the process tree may
	// overcount the instances running at once (see subjectChurn).
	churnSampleSlack = 2
)

// BenchmarkSubjectChurn measures what per-subject instances cost at
// scale (issue 48): `evokore serve --http` with JWT callers and one
// fixture child of scope subject; -churn-subjects distinct subjects,
// churnWorkers at a time, each opening a session, making a first call
// (its instance starts: the call's time is start-to-first-call), every
// other one a second call (the warm instance), and closing the session.
// Instances idle churnIdle are reaped as the churn goes on; past the cap
// a first call is refused naming EVOKORE_INSTANCE_MAX, counted, and made
// again after a pause, as a client would. Each instance's private memory
// (Private_Clean + Private_Dirty of /proc/<pid>/smaps_rollup: what no
// other process maps) is read after its first call. A second router,
// whose instances do not idle out, holds churnHold instances live to
// weigh the router's own private memory per live instance.
//
// After the churn and a reap wait, the router's goroutines (go_goroutines
// of /metrics), open descriptors and sessions must be back to what they
// were after one subject's instance came and went, and no instance
// process may be left in the router's process tree: a leak fails the
// benchmark.
func BenchmarkSubjectChurn(b *testing.B) {
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		b.Skipf("no smaps_rollup: %v", err)
	}
	keys := newJWKS(b)
	var runs []churnResult
	for b.Loop() {
		r := subjectChurn(b, keys)
		r.growth = holdInstances(b, keys)
		runs = append(runs, r)
	}
	med := func(f func(churnResult) float64) float64 {
		v := make([]float64, 0, len(runs))
		for _, r := range runs {
			v = append(v, f(r))
		}
		return median(v)
	}
	for _, m := range churnMetrics {
		b.ReportMetric(med(m.of), m.unit)
	}
	if *churnReport != "" {
		writeChurnReport(b, runs[len(runs)-1], len(runs))
	}
}

// churnResult is one run's figures.
type churnResult struct {
	subjects, refusals, started, reapedDuring, peakLive int
	// first and second are the first and warm second calls' latencies.
	first, second []time.Duration
	// privateKiB is each instance's private memory after its first call.
	privateKiB []float64
	// wall is the churn's duration.
	wall time.Duration
	// before and after are the router's goroutines, descriptors and
	// sessions after one subject, and after the churn and the reap.
	before, after routerCounts
	// growth is the router's own private memory per live instance, KiB.
	growth float64
	// routerBefore and routerAfter are the router's private memory, KiB,
	// at before and at after: what the churn left behind (a Go heap
	// returns freed memory to the system lazily, so an upper bound).
	routerBefore, routerAfter float64
}

// churnMetrics are the figures reported with b.ReportMetric.
var churnMetrics = []struct {
	unit string
	of   func(churnResult) float64
}{
	{"first-call-p50-ms", func(r churnResult) float64 { return ms(percentile(r.first, 50)) }},
	{"first-call-p95-ms", func(r churnResult) float64 { return ms(percentile(r.first, 95)) }},
	{"second-call-p50-ms", func(r churnResult) float64 { return ms(percentile(r.second, 50)) }},
	{"instance-private-p50-KiB", func(r churnResult) float64 { return median(r.privateKiB) }},
	{"router-KiB/live-instance", func(r churnResult) float64 { return r.growth }},
	{"instances-started", func(r churnResult) float64 { return float64(r.started) }},
	{"reaped-during-churn", func(r churnResult) float64 { return float64(r.reapedDuring) }},
	{"peak-live-instances", func(r churnResult) float64 { return float64(r.peakLive) }},
	{"cap-refusals", func(r churnResult) float64 { return float64(r.refusals) }},
	{"subjects/s", func(r churnResult) float64 { return float64(r.subjects) / r.wall.Seconds() }},
	{"router-private-growth-MiB", func(r churnResult) float64 { return (r.routerAfter - r.routerBefore) / 1024 }},
	{"goroutines-after-minus-before", func(r churnResult) float64 { return float64(r.after.goroutines - r.before.goroutines) }},
	{"fds-after-minus-before", func(r churnResult) float64 { return float64(r.after.fds - r.before.fds) }},
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// churnRouter is one `evokore serve --http` the churn drives.
type churnRouter struct {
	base   string
	pid    int
	home   string
	keys   *jwks
	client *http.Client
	// template is the configured child (it takes no call).
	template int
}

// startChurnRouter starts a router with JWT callers and one fixture
// child of scope subject, instances idle past idle reaped, and waits
// for the child to boot.
func startChurnRouter(b *testing.B, keys *jwks, idle time.Duration) *churnRouter {
	b.Helper()
	dir := b.TempDir()
	// No cooldown: a refusal at the cap is an error result, which would
	// cool down the subject's identical call made again.
	testutil.WriteJSON(b, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fx": map[string]any{"command": testutil.FixtureServer(b), "args": []string{}, "scope": "subject", "cooldownMs": 0},
	}})
	cmd := exec.Command(testutil.Evokore(b), "serve", "--http", "127.0.0.1:0")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"),
		"EVOKORE_AUTH_REQUIRED=true", "EVOKORE_AUTH_MODE=jwt", "EVOKORE_OAUTH_JWKS_URI=" + keys.url, "EVOKORE_OAUTH_AUDIENCE=evokore",
		"EVOKORE_TENANT_SCOPING=true", "EVOKORE_INSTANCE_IDLE_MS=" + strconv.Itoa(int(idle.Milliseconds())),
		"EVOKORE_INSTANCE_MAX=" + strconv.Itoa(churnMax)}
	base, stderr := startHTTP(b, cmd)
	r := &churnRouter{base: base, pid: cmd.Process.Pid, home: filepath.Join(dir, "home"), keys: keys, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: churnWorkers}}}
	b.Cleanup(r.client.CloseIdleConnections)
	// The children boot once the first session opens.
	c := mcp.NewClient(&mcp.Implementation{Name: "churn", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerOn{r.token(b, "observer"), r.client.Transport}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	routertest.WaitFor(b, "the template child to boot", func() bool { return strings.Contains(stderr.String(), "Proxy bootstrap complete") })
	_ = cs.Close()
	r.template = len(fixtureProcs(r.pid))
	return r
}

// token is a JWT for subject.
func (r *churnRouter) token(b *testing.B, subject string) string {
	return r.keys.sign(b, jwt.MapClaims{"aud": "evokore", "sub": subject, "exp": time.Now().Add(time.Hour).Unix()})
}

// subjectRun is what one subject's session measured.
type subjectRun struct {
	first, second time.Duration
	pid           int
	refusals      int
	privateKiB    float64
}

// subject opens a session as token, makes the first call (again after
// a pause while the cap refuses it) and, with second, a warm call, then
// closes the session.
func (r *churnRouter) subject(token string, second bool) (subjectRun, error) {
	var run subjectRun
	c := mcp.NewClient(&mcp.Implementation{Name: "churn", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: r.base + "/mcp", HTTPClient: &http.Client{Transport: bearerOn{token, r.client.Transport}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return run, fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = cs.Close() }()
	for {
		start := time.Now()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx_pid", Arguments: map[string]any{}})
		run.first = time.Since(start)
		if err != nil {
			return run, fmt.Errorf("first call: %w", err)
		}
		text := routertest.Text(res)
		if res.IsError && strings.Contains(text, "EVOKORE_INSTANCE_MAX") {
			run.refusals++
			time.Sleep(churnIdle / 5)
			continue
		}
		if run.pid, err = strconv.Atoi(strings.TrimSpace(text)); res.IsError || err != nil {
			return run, fmt.Errorf("first call answered %q", text)
		}
		break
	}
	if m, err := privateMemory(run.pid); err == nil {
		run.privateKiB = m
	}
	if second {
		start := time.Now()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx_echo", Arguments: map[string]any{"message": "again"}})
		run.second = time.Since(start)
		if err != nil || res.IsError {
			return run, fmt.Errorf("second call: %v %q", err, routertest.Text(res))
		}
	}
	return run, nil
}

// bearerOn adds a bearer token to requests sent over a shared transport.
type bearerOn struct {
	token string
	next  http.RoundTripper
}

func (t bearerOn) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(req)
}

// drive runs subjects (tokens), churnWorkers at a time; it returns each
// subject's run, or the first error.
func (r *churnRouter) drive(tokens []string) ([]subjectRun, error) {
	runs := make([]subjectRun, len(tokens))
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range churnWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tokens) {
					return
				}
				run, err := r.subject(tokens[i], i%2 == 0)
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("subject %d: %w", i, err)
				}
				runs[i] = run
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	return runs, first
}

// subjectChurn is one churn of -churn-subjects subjects.
func subjectChurn(b *testing.B, keys *jwks) churnResult {
	b.Helper()
	r := startChurnRouter(b, keys, churnIdle)
	observer := r.token(b, "observer")
	// The baseline: one subject's instance came and went, so what lives
	// as long as the router (the reaper) is counted in it.
	if _, err := r.drive([]string{r.token(b, "warm-up")}); err != nil {
		b.Fatal(err)
	}
	r.awaitReaped(b)
	before := r.counts(b, observer)
	routerBefore, _ := privateMemory(r.pid)
	tokens := make([]string, *churnSubjects)
	for i := range tokens {
		tokens[i] = r.token(b, fmt.Sprintf("subject-%04d", i))
	}
	// Sample the live instances while the churn goes on.
	stop, peak := make(chan struct{}), make(chan int, 1)
	go func() {
		most := 0
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- most
				return
			case <-tick.C:
				most = max(most, len(fixtureProcs(r.pid))-r.template)
			}
		}
	}()
	start := time.Now()
	runs, err := r.drive(tokens)
	wall := time.Since(start)
	close(stop)
	res := churnResult{subjects: len(tokens), wall: wall, peakLive: <-peak, before: before}
	if err != nil {
		b.Fatal(err)
	}
	for i, run := range runs {
		res.refusals += run.refusals
		res.first = append(res.first, run.first)
		if i%2 == 0 {
			res.second = append(res.second, run.second)
		}
		if run.privateKiB > 0 {
			res.privateKiB = append(res.privateKiB, run.privateKiB)
		}
	}
	// Every subject is new: each first call answered started an instance.
	res.started = len(runs)
	live := len(fixtureProcs(r.pid)) - r.template
	res.reapedDuring = res.started - live
	r.awaitReaped(b)
	// The cap bounds the instance processes, those being stopped
	// included; the sampler reads each thread's children in turn, so an
	// instance ending while a new one starts may be seen twice.
	if res.peakLive > churnMax+churnSampleSlack {
		b.Fatalf("%d instance processes ran at once under EVOKORE_INSTANCE_MAX=%d", res.peakLive, churnMax)
	}
	res.after = r.settled(b, observer, before)
	res.routerBefore = routerBefore
	res.routerAfter, _ = privateMemory(r.pid)
	return res
}

// holdInstances starts a router whose instances do not idle out, opens
// churnHold subjects' instances and returns the router's own private
// memory growth per live instance, KiB.
func holdInstances(b *testing.B, keys *jwks) float64 {
	b.Helper()
	r := startChurnRouter(b, keys, time.Hour)
	if _, err := r.drive([]string{r.token(b, "warm-up")}); err != nil {
		b.Fatal(err)
	}
	tokens := make([]string, churnHold)
	for i := range tokens {
		tokens[i] = r.token(b, fmt.Sprintf("held-%02d", i))
	}
	r.client.CloseIdleConnections()
	time.Sleep(memIdle)
	before, err := privateMemory(r.pid)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.drive(tokens); err != nil {
		b.Fatal(err)
	}
	if live := len(fixtureProcs(r.pid)) - r.template; live != churnHold+1 {
		b.Fatalf("%d instances live, want %d", live, churnHold+1)
	}
	r.client.CloseIdleConnections()
	time.Sleep(memIdle)
	after, err := privateMemory(r.pid)
	if err != nil {
		b.Fatal(err)
	}
	return (after - before) / churnHold
}

// awaitReaped waits until no instance is left in the router's process
// tree (the template alone), failing the benchmark past the reap's time.
func (r *churnRouter) awaitReaped(b *testing.B) {
	b.Helper()
	const wait = churnIdle + 30*time.Second
	deadline := time.Now().Add(wait)
	for {
		procs := fixtureProcs(r.pid)
		if len(procs) == r.template {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s after the last call, %d instance processes are left in the router's tree: %v", wait, len(procs)-r.template, procs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// routerCounts are what a leak would grow. records are the descriptors
// open on files under EVOKORE_HOME: the audit log and the replay files
// of recent sessions, which stay open between appends, at most
// maxHeldRecords of them (statefile's bound); fds are the others.
type routerCounts struct{ goroutines, fds, records, sessions int }

// maxHeldRecords is statefile's maxHeld: the record files the router
// keeps open between appends, least recently used closed first.
const maxHeldRecords = 32

// counts reads the router's goroutines and sessions from /metrics and its
// open descriptors from /proc, once the benchmark's idle connections to
// it are closed.
func (r *churnRouter) counts(b *testing.B, token string) routerCounts {
	b.Helper()
	r.client.CloseIdleConnections()
	req, _ := http.NewRequest("GET", r.base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	// Its own connection, closed with the answer.
	req.Close = true
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != 200 {
		b.Fatalf("/metrics: %d %s", res.StatusCode, body)
	}
	gauge := func(name string) int {
		for _, line := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return int(f)
			}
		}
		b.Fatalf("/metrics has no %s", name)
		return 0
	}
	dir := fmt.Sprintf("/proc/%d/fd", r.pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	n := routerCounts{goroutines: gauge("go_goroutines"), sessions: gauge("evokore_sessions")}
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join(dir, fd.Name())); strings.HasPrefix(target, r.home+"/") {
			n.records++
		} else {
			n.fds++
		}
	}
	return n
}

// settled waits for the router's counts to come back within the slack
// of before, and fails the benchmark when they do not.
func (r *churnRouter) settled(b *testing.B, token string, before routerCounts) routerCounts {
	b.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		now := r.counts(b, token)
		if now.goroutines <= before.goroutines+churnGoroutineSlack && now.fds <= before.fds+churnFDSlack && now.sessions <= before.sessions &&
			now.records <= maxHeldRecords+1 {
			return now
		}
		if time.Now().After(deadline) {
			b.Fatalf("after the churn and the reap the router holds %d goroutines, %d descriptors (and %d on its records, at most %d + the audit log) and %d sessions; before the churn %d, %d and %d; its descriptors: %s",
				now.goroutines, now.fds, now.records, maxHeldRecords, now.sessions, before.goroutines, before.fds, before.sessions, openFiles(r.pid))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// openFiles names what pid's descriptors are open on, with a count.
func openFiles(pid int) string {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, _ := os.ReadDir(dir)
	n := map[string]int{}
	for _, e := range entries {
		target, _ := os.Readlink(filepath.Join(dir, e.Name()))
		if i := strings.IndexByte(target, ':'); i > 0 && !strings.HasPrefix(target, "/") {
			target = target[:i] // socket:[123], pipe:[456]
		}
		n[target]++
	}
	var out []string
	for target, c := range n {
		out = append(out, fmt.Sprintf("%s ×%d", target, c))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// fixtureProcs lists the fixture processes in pid's process tree
// (zombies included: an instance not waited for is a leak too).
func fixtureProcs(pid int) []int {
	var found []int
	var walk func(int)
	walk = func(p int) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p))
		for _, t := range tasks {
			data, _ := os.ReadFile(t)
			for _, f := range strings.Fields(string(data)) {
				c, _ := strconv.Atoi(f)
				comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", c))
				if strings.TrimSpace(string(comm)) == "fixtureserver" {
					found = append(found, c)
				}
				walk(c)
			}
		}
	}
	walk(pid)
	slices.Sort(found)
	return slices.Compact(found)
}

// privateMemory is a process's Private_Clean + Private_Dirty from
// /proc/<pid>/smaps_rollup, KiB: the pages no other process maps.
func privateMemory(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	var kib float64
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && (f[0] == "Private_Clean:" || f[0] == "Private_Dirty:") {
			n, _ := strconv.Atoi(f[1])
			kib += float64(n)
		}
	}
	return kib, nil
}

// writeChurnReport writes the last run's table for docs/performance.md.
func writeChurnReport(b *testing.B, r churnResult, runs int) {
	b.Helper()
	var md strings.Builder
	fmt.Fprintf(&md, "`BenchmarkSubjectChurn`: `evokore serve --http` with JWT callers and one Go fixture child of `scope: subject`; %d distinct subjects, %d at a time, each opening a 2025-11-25 session, making a first call (its instance starts), every other one a second call, and closing the session. EVOKORE_INSTANCE_IDLE_MS=%d, so instances are reaped while the churn goes on; EVOKORE_INSTANCE_MAX=%d (the default): a first call it refuses is counted and made again after %s. The instance processes running at once, those being stopped included, may not exceed the cap (the peak is sampled every 50 ms). Start-to-first-call is the first `tools/call`'s time, session already open: spawn, handshake and `tools/list` of the instance, then the call. Private memory is Private_Clean + Private_Dirty of `/proc/<pid>/smaps_rollup` (pages no other process maps; the fixture's binary is shared by its instances): each instance's after its first call; the router's own growth per live instance is measured on a second router whose instances do not idle out, before and after %d subjects' instances started (sessions closed, idle %s), divided by %d. After the churn and the reap, the router's goroutines (`go_goroutines`), open descriptors and sessions must be back to what they were after one subject's instance came and went (within %d goroutines and %d descriptors; the descriptors of the audit log and of recent sessions' replay files, which the router keeps open between appends, at most %d, are not in the column and are held to that bound), and no instance process may be left in its tree: a leak fails the benchmark. The router's private memory before and after the churn is what the churn left behind, an upper bound (the Go heap returns freed pages lazily). %d run(s); the figures are the last run's.\n\n",
		r.subjects, churnWorkers, churnIdle.Milliseconds(), churnMax, churnIdle/5, churnHold, memIdle, churnHold, churnGoroutineSlack, churnFDSlack, maxHeldRecords, runs)
	md.WriteString("| subjects | subjects/s | first call p50 ms | p95 ms | second call p50 ms | instance private p50 MiB | router KiB per live instance | instances started | reaped during the churn | peak live | cap refusals | goroutines before → after | descriptors before → after | router private MiB before → after | processes left |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&md, "| %d | %.0f | %.1f | %.1f | %.1f | %.2f | %.0f | %d | %d | %d | %d | %d → %d | %d → %d | %.1f → %.1f | 0 |\n",
		r.subjects, float64(r.subjects)/r.wall.Seconds(), ms(percentile(r.first, 50)), ms(percentile(r.first, 95)), ms(percentile(r.second, 50)),
		median(r.privateKiB)/1024, r.growth, r.started, r.reapedDuring, r.peakLive, r.refusals,
		r.before.goroutines, r.after.goroutines, r.before.fds, r.after.fds, r.routerBefore/1024, r.routerAfter/1024)
	if err := os.WriteFile(*churnReport, []byte(md.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}
