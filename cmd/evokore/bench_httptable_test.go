package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/testutil"
)

var (
	httpRounds = flag.Int("http-rounds", 5, "BenchmarkHTTPTable: interleaved rounds")
	httpCalls  = flag.Int("http-calls", 1000, "BenchmarkHTTPTable: calls per phase and round")
	httpReport = flag.String("http-report", "", "BenchmarkHTTPTable: also write the table as markdown to this file (make bench-report)")
	httpBase   = flag.String("http-base", "", "BenchmarkHTTPTable: another evokore binary (an older build) to measure in the same rounds, in both eras")
)

// BenchmarkHTTPTable is the HTTP side of the proxy-cost table: a client
// over streamable HTTP → a proxy → the same child over stdio. The floor is
// httpbridge (internal/testutil/httpbridge), which does only what any such
// proxy must: one POST in, the id swapped, one line to the child and back,
// a plain JSON answer. Beside it, evokore serve --http in a 2025-11-25
// session (evokore), with 2026-07-28 requests that open no session
// (evokore-2026), and in a session with the operator records off
// (evokore-norec), for the npm server-everything and the Go fixture child.
//
// The client is a raw HTTP JSON-RPC client (net/http, keep-alive; it
// accepts a JSON or an event-stream answer), so the figures are the
// proxies' cost with little client cost on top. Each round runs every
// target in turn: 1,000 sequential calls in one session (p50, p99), then
// 1,000 calls from 16 sessions at once (calls/s); CPU per call is the
// proxy's utime+stime over both phases. Ratios are per round against the
// bridge, medians over rounds. After the rounds each target serves 64
// sessions at once, 20 calls each, and every call that failed is counted
// as lost. Private memory (see memoryOf) is the proxy process's after that.
func BenchmarkHTTPTable(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("needs /proc for CPU and memory")
	}
	fx := testutil.FixtureServer(b)
	bridge := testutil.Build(b, "./internal/testutil/httpbridge", "httpbridge")
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
		child, kind string
		at          httpEndpoint
		tool        string
		pid         int
		rounds      []httpRound
		lost, total int
	}
	args := `{"message":"a longer benchmark message"}`
	var targets []*target
	for _, ch := range children {
		cmd := exec.Command(bridge, ch.argv...)
		url := startListening(b, cmd, regexp.MustCompile(`httpbridge listening on (\S+)`))
		targets = append(targets, &target{child: ch.name, kind: "bridge", at: httpEndpoint{url: url + "/mcp", era: sessionEra}, tool: "echo", pid: cmd.Process.Pid})
		router := func(bin, kind, era string, env ...string) *target {
			dir := b.TempDir()
			testutil.WriteJSON(b, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
				"c": map[string]any{"command": ch.argv[0], "args": ch.argv[1:]},
			}})
			cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0")
			cmd.Dir = dir
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home"),
				"EVOKORE_TOOL_DISCOVERY_MODE=legacy"}, env...)
			base, _ := startHTTP(b, cmd)
			return &target{child: ch.name, kind: kind, at: httpEndpoint{url: base + "/mcp", era: era}, tool: "c_echo", pid: cmd.Process.Pid}
		}
		targets = append(targets, router(bin, "evokore", sessionEra), router(bin, "evokore-2026", sessionlessEra),
			router(bin, "evokore-norec", sessionEra, "EVOKORE_AUDIT_LOG=false", "EVOKORE_SESSION_REPLAY=false"))
		if *httpBase != "" {
			targets = append(targets, router(*httpBase, "base", sessionEra), router(*httpBase, "base-2026", sessionlessEra))
		}
	}
	for _, t := range targets {
		waitHTTPTool(b, t.at, t.tool, args)
		s := newHTTPSession(b, t.at)
		for range 50 { // warm-up
			if err := s.call(t.tool, args); err != nil {
				b.Fatalf("%s %s: %v", t.child, t.kind, err)
			}
		}
	}
	for b.Loop() {
		for range *httpRounds {
			for _, t := range targets {
				t.rounds = append(t.rounds, httpRoundOf(b, t.at, t.tool, args, t.pid, *httpCalls))
			}
		}
	}
	for _, t := range targets {
		t.lost, t.total = httpSessions(b, t.at, t.tool, args, 64, 20)
	}

	var md strings.Builder
	fmt.Fprintf(&md, "%d interleaved rounds × %d sequential calls of `echo %s` in one session, then %d more from 16 sessions at once; then 64 sessions at once, 20 calls each. Medians over the rounds; ratios per round to `bridge`.\n\n", *httpRounds, *httpCalls, args, *httpCalls)
	md.WriteString("Client: a raw JSON-RPC client over net/http (keep-alive; accepts a JSON or an event-stream answer). `evokore` and `evokore-norec` serve it a 2025-11-25 session (each call answered as a resumable event stream); `evokore-2026` gets 2026-07-28 requests without a session (each answered as plain JSON).\n\n")
	md.WriteString("| child | path | p50 µs | p99 µs | p50 ÷ bridge | calls/s | ÷ bridge | 16 sessions, calls/s | ÷ bridge | proxy CPU µs/call | ÷ bridge | 64 sessions, lost | private MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	per := len(targets) / len(children)
	for i := 0; i < len(targets); i += per {
		floor := targets[i]
		for _, t := range targets[i : i+per] {
			var p50r, seqr, tpr, cpur []float64
			for k, r := range t.rounds {
				f := floor.rounds[k]
				p50r = append(p50r, float64(r.p50)/float64(f.p50))
				seqr = append(seqr, r.seqPerSec/f.seqPerSec)
				tpr = append(tpr, r.perSec16/f.perSec16)
				cpur = append(cpur, r.cpuPerCall/f.cpuPerCall)
			}
			med := func(f func(httpRound) float64) float64 {
				var v []float64
				for _, r := range t.rounds {
					v = append(v, f(r))
				}
				return median(v)
			}
			fmt.Fprintf(&md, "| %s | %s | %.0f | %.0f | %.2f | %.0f | %.2f | %.0f | %.2f | %.0f | %.2f | %d of %d | %.1f |\n",
				t.child, t.kind,
				med(func(r httpRound) float64 { return float64(r.p50.Microseconds()) }),
				med(func(r httpRound) float64 { return float64(r.p99.Microseconds()) }),
				median(p50r),
				med(func(r httpRound) float64 { return r.seqPerSec }), median(seqr),
				med(func(r httpRound) float64 { return r.perSec16 }), median(tpr),
				med(func(r httpRound) float64 { return r.cpuPerCall }), median(cpur),
				t.lost, t.total, privateOf(t.pid))
			if t.kind == "evokore" || t.kind == "evokore-2026" {
				tag := strings.TrimPrefix(t.child, "server-") + strings.TrimPrefix(t.kind, "evokore")
				b.ReportMetric(median(p50r), tag+"-p50÷bridge")
				b.ReportMetric(med(func(r httpRound) float64 { return r.cpuPerCall }), tag+"-cpu-µs/call")
				b.ReportMetric(float64(t.lost), tag+"-lost64")
			}
		}
	}
	if *httpBase != "" {
		md.WriteString("\nThis build against the base build, medians over rounds of the per-round ratios:\n\n| child | era | p50 ÷ base | CPU/call ÷ base |\n|---|---|---|---|\n")
		for i := 0; i < len(targets); i += per {
			group := targets[i : i+per]
			for _, pair := range [][2]string{{"evokore", "base"}, {"evokore-2026", "base-2026"}} {
				var this, base *target
				for _, t := range group {
					switch t.kind {
					case pair[0]:
						this = t
					case pair[1]:
						base = t
					}
				}
				var p50r, cpur []float64
				for k := range this.rounds {
					p50r = append(p50r, float64(this.rounds[k].p50)/float64(base.rounds[k].p50))
					cpur = append(cpur, this.rounds[k].cpuPerCall/base.rounds[k].cpuPerCall)
				}
				fmt.Fprintf(&md, "| %s | %s | %.3f | %.3f |\n", this.child, this.at.era, median(p50r), median(cpur))
			}
		}
	}
	fmt.Print("\n" + md.String())
	if *httpReport != "" {
		if err := os.WriteFile(*httpReport, []byte(md.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// httpRound is one target's measurements in one round.
type httpRound struct {
	p50, p99   time.Duration
	seqPerSec  float64
	perSec16   float64
	cpuPerCall float64 // µs of the proxy process
}

func httpRoundOf(b *testing.B, at httpEndpoint, tool, args string, pid, n int) httpRound {
	var r httpRound
	cpu0 := cpuTicks(b, pid)
	s := newHTTPSession(b, at)
	lat := make([]time.Duration, 0, n)
	start := time.Now()
	for range n {
		t0 := time.Now()
		if err := s.call(tool, args); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	r.seqPerSec = float64(n) / time.Since(start).Seconds()
	slices.Sort(lat)
	r.p50, r.p99 = lat[(len(lat)*50+99)/100-1], lat[(len(lat)*99+99)/100-1]
	sessions := make([]*httpSession, 16)
	for i := range sessions {
		sessions[i] = newHTTPSession(b, at)
	}
	start = time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(sessions))
	for i, s := range sessions {
		wg.Go(func() {
			for j := i; j < n; j += len(sessions) {
				if err := s.call(tool, args); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	r.perSec16 = float64(n) / time.Since(start).Seconds()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	r.cpuPerCall = float64(cpuTicks(b, pid)-cpu0) * 1e6 / clockTicks / float64(2*n)
	return r
}

// httpSessions opens n sessions at once, each making calls calls, and
// returns how many calls failed (a session that could not open loses all
// of its calls) out of how many.
func httpSessions(b *testing.B, at httpEndpoint, tool, args string, n, calls int) (lost, total int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			bad := calls
			if s, err := openHTTPSession(at); err == nil {
				bad = 0
				for range calls {
					if s.call(tool, args) != nil {
						bad++
					}
				}
			}
			mu.Lock()
			lost += bad
			mu.Unlock()
		})
	}
	wg.Wait()
	return lost, n * calls
}

// waitHTTPTool calls tool until it answers (a router's child boots after
// the first session).
func waitHTTPTool(b *testing.B, at httpEndpoint, tool, args string) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		s, err := openHTTPSession(at)
		if err == nil {
			if err = s.call(tool, args); err == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s at %s never answered: %v", tool, at.url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// httpSession is one MCP session over streamable HTTP, made of plain
// POSTs: initialize (its Mcp-Session-Id is sent on every later request),
// notifications/initialized, then calls.
type httpSession struct {
	url, id, protocol string
	next              int
	// sessionless is a 2026-07-28 caller: no initialize, each call
	// carries its protocol, capabilities and client in _meta and names
	// itself in Mcp-Method and Mcp-Name; tool is that name.
	sessionless bool
	tool        string
}

// httpEndpoint is where a benchmark client posts and in which protocol
// era: a 2025-11-25 session, or 2026-07-28 requests without one.
type httpEndpoint struct{ url, era string }

const (
	sessionEra     = "2025-11-25"
	sessionlessEra = "2026-07-28"
)

// httpTransport is shared by every session, as one client process's
// connection pool would be, with room for 64 sessions' connections.
var httpTransport = &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}

func newHTTPSession(b *testing.B, at httpEndpoint) *httpSession {
	s, err := openHTTPSession(at)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func openHTTPSession(at httpEndpoint) (*httpSession, error) {
	s := &httpSession{url: at.url}
	if at.era == sessionlessEra {
		s.protocol, s.sessionless = at.era, true
		return s, nil
	}
	if _, err := s.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench-http","version":"1"}}}`, true); err != nil {
		return nil, err
	}
	s.protocol = "2025-11-25"
	if _, err := s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false); err != nil {
		return nil, err
	}
	return s, nil
}

// call makes one tools/call and fails on an error answer.
func (s *httpSession) call(tool, args string) error {
	s.next++
	meta := ""
	if s.sessionless {
		meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + s.protocol + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench-http","version":"1"}}`
		s.tool = tool
	}
	res, err := s.post(`{"jsonrpc":"2.0","id":`+strconv.Itoa(s.next)+`,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+meta+`}}`, true)
	if err != nil {
		return err
	}
	if bytes.Contains(res, []byte(`"isError":true`)) {
		return fmt.Errorf("%s: %s", tool, res)
	}
	return nil
}

// post sends one message; for a request it returns the answer's result,
// read from a JSON body or from the event stream's first answer.
func (s *httpSession) post(body string, request bool) (json.RawMessage, error) {
	req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	if s.protocol != "" {
		req.Header.Set("Mcp-Protocol-Version", s.protocol)
	}
	if s.sessionless {
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", s.tool)
	}
	resp, err := httpTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		s.id = id
	}
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%s: %s", resp.Status, msg)
	}
	if !request {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, nil
	}
	var line []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The first data line that is an answer (has a result or an
		// error); notifications and empty priming events before it are
		// skipped.
		br := bufio.NewReader(resp.Body)
		for {
			l, err := br.ReadBytes('\n')
			if data, ok := bytes.CutPrefix(l, []byte("data:")); ok && len(bytes.TrimSpace(data)) > 0 && !bytes.Contains(data, []byte(`"method"`)) {
				line = data
				break
			}
			if err != nil {
				return nil, fmt.Errorf("event stream ended without an answer: %v", err)
			}
		}
		_, _ = io.Copy(io.Discard, resp.Body)
	} else if line, err = io.ReadAll(resp.Body); err != nil {
		return nil, err
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("bad answer %q: %v", line, err)
	}
	if m.Error != nil {
		return nil, errors.New(string(m.Error))
	}
	return m.Result, nil
}

// startListening starts cmd and returns http://ADDR once a line of its
// stderr matches listen (whose first group is the address). When the
// benchmark ends its stdin is closed (httpbridge then ends its child and
// itself), and it is killed if it has not gone in 5 s.
func startListening(b *testing.B, cmd *exec.Cmd, listen *regexp.Regexp) string {
	b.Helper()
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	in, err := cmd.StdinPipe()
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
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := listen.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case addr := <-found:
		return "http://" + addr
	case <-time.After(60 * time.Second):
		b.Fatalf("%s did not start listening", cmd.Path)
	}
	return ""
}
