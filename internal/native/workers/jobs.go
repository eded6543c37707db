package workers

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// options are the fields worker_dispatch understands, read from the
// options object.
type options struct {
	Command    []string `json:"command"`
	Cwd        string   `json:"cwd"`
	Root       string   `json:"root"`
	TimeoutMs  *int64   `json:"timeoutMs"`
	Iterations *int     `json:"iterations"`
	Warmup     *int     `json:"warmup"`
}

// plan validates a dispatch and returns the work to run; an error here
// refuses the dispatch before anything starts.
func (m *Manager) plan(workerType string, raw map[string]any) (job, error) {
	var o options
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("options do not fit %s: %v (command is an array of strings; cwd and root are strings; timeoutMs, iterations and warmup are integers)", workerType, err)
	}
	if raw != nil {
		if c, ok := raw["command"]; ok && len(o.Command) == 0 {
			return nil, fmt.Errorf("options.command must be a non-empty array of strings, not %v", c)
		}
	}
	if len(o.Command) > 0 && o.Command[0] == "" {
		return nil, errors.New("options.command[0] must name a program")
	}
	switch workerType {
	case "test_run":
		return m.planTestRun(o)
	case "benchmark":
		return m.planBenchmark(o)
	case "repo_analysis", "security_scan":
		root, err := m.resolveDir(o.Root, "root")
		if err != nil {
			return nil, err
		}
		if workerType == "repo_analysis" {
			return func(ctx context.Context) (any, error) { return analyse(ctx, root) }, nil
		}
		return func(ctx context.Context) (any, error) { return scan(ctx, root) }, nil
	}
	return nil, &UnknownTypeError{Type: workerType}
}

// resolveDir resolves a directory option against the router's working directory.
func (m *Manager) resolveDir(p, name string) (string, error) {
	if p == "" {
		p = m.cwd
	} else if !filepath.IsAbs(p) {
		p = filepath.Join(m.cwd, p)
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("options.%s is not a directory: %s", name, p)
	}
	return p, nil
}

func timeout(o options, def time.Duration) time.Duration {
	if o.TimeoutMs != nil && *o.TimeoutMs > 0 {
		return time.Duration(*o.TimeoutMs) * time.Millisecond
	}
	return def
}

// TestRun is test_run's result.
type TestRun struct {
	Command    []string `json:"command"`
	Cwd        string   `json:"cwd"`
	Passed     bool     `json:"passed"`
	ExitCode   int      `json:"exitCode"`
	DurationMs float64  `json:"durationMs"`
	TimedOut   bool     `json:"timedOut,omitempty"`
	// Go summarises `go test` output: packages that passed and failed,
	// and failed tests.
	Go     *GoSummary `json:"go,omitempty"`
	Output string     `json:"output"`
}

// GoSummary counts the verdict lines of `go test`.
type GoSummary struct {
	PackagesOK     int      `json:"packagesOk"`
	PackagesFailed int      `json:"packagesFailed"`
	FailedTests    []string `json:"failedTests"`
}

func (m *Manager) planTestRun(o options) (job, error) {
	cwd, err := m.resolveDir(o.Cwd, "cwd")
	if err != nil {
		return nil, err
	}
	argv := o.Command
	if len(argv) == 0 {
		switch {
		case exists(filepath.Join(cwd, "go.mod")):
			argv = []string{"go", "test", "./..."}
		case exists(filepath.Join(cwd, "package.json")):
			argv = []string{"npm", "test"}
		case exists(filepath.Join(cwd, "pyproject.toml")):
			argv = []string{"python3", "-m", "pytest"}
		case exists(filepath.Join(cwd, "Cargo.toml")):
			argv = []string{"cargo", "test"}
		default:
			return nil, fmt.Errorf("test_run needs options.command (an argv array such as [\"make\", \"test\"]): %s has no go.mod, package.json, pyproject.toml or Cargo.toml to infer it from", cwd)
		}
	}
	limit := timeout(o, 10*time.Minute)
	return func(ctx context.Context) (any, error) {
		r, err := m.execute(ctx, argv, cwd, limit, true)
		res := &TestRun{Command: argv, Cwd: cwd, Passed: err == nil && r.ExitCode == 0, ExitCode: r.ExitCode,
			DurationMs: r.DurationMs, TimedOut: r.TimedOut, Output: r.output}
		if argv[0] == "go" && slices.Contains(argv, "test") {
			res.Go = summariseGo(r.output)
		}
		if err != nil && r.output == "" && !r.TimedOut {
			return nil, err
		}
		return res, err
	}, nil
}

func summariseGo(out string) *GoSummary {
	s := &GoSummary{FailedTests: []string{}}
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "ok  \t") || strings.HasPrefix(line, "ok \t"):
			s.PackagesOK++
		case strings.HasPrefix(line, "FAIL\t"):
			s.PackagesFailed++
		case strings.Contains(line, "--- FAIL: "):
			name, _, _ := strings.Cut(strings.TrimSpace(strings.SplitN(line, "--- FAIL: ", 2)[1]), " ")
			s.FailedTests = append(s.FailedTests, name)
		}
	}
	return s
}

// Benchmark is benchmark's result. Times are milliseconds.
type Benchmark struct {
	Command []string `json:"command"`
	// Probe names what was timed when no command was given.
	Probe      string  `json:"probe,omitempty"`
	Cwd        string  `json:"cwd"`
	Iterations int     `json:"iterations"`
	Warmup     int     `json:"warmup"`
	Runs       []run   `json:"runs"`
	Failures   int     `json:"failures"`
	MinMs      float64 `json:"minMs"`
	MaxMs      float64 `json:"maxMs"`
	MeanMs     float64 `json:"meanMs"`
	MedianMs   float64 `json:"medianMs"`
	StddevMs   float64 `json:"stddevMs"`
}

func (m *Manager) planBenchmark(o options) (job, error) {
	cwd, err := m.resolveDir(o.Cwd, "cwd")
	if err != nil {
		return nil, err
	}
	n, warm := 5, 0
	if o.Iterations != nil {
		n = *o.Iterations
	}
	if o.Warmup != nil {
		warm = *o.Warmup
	}
	if n < 1 || n > 100 {
		return nil, fmt.Errorf("options.iterations must be between 1 and 100, not %d", n)
	}
	if warm < 0 || warm > 10 {
		return nil, fmt.Errorf("options.warmup must be between 0 and 10, not %d", warm)
	}
	limit := timeout(o, 2*time.Minute)
	exec := func(ctx context.Context) (run, error) { return m.execute(ctx, o.Command, cwd, limit, false) }
	command, probeName := o.Command, ""
	if len(command) == 0 {
		// EVOKORE-MCP's benchmark with no options times a probe; this one
		// measures the machine's disk and CPU where the work would run.
		command, probeName, exec = []string{}, probeText, func(context.Context) (run, error) { return probe() }
	}
	return func(ctx context.Context) (any, error) {
		b := &Benchmark{Command: command, Probe: probeName, Cwd: cwd, Iterations: n, Warmup: warm, Runs: []run{}}
		for range warm {
			if _, err := exec(ctx); err != nil {
				return b, fmt.Errorf("warm-up run: %w", err)
			}
		}
		for range n {
			r, err := exec(ctx)
			if err != nil {
				return b, fmt.Errorf("run %d: %w", len(b.Runs)+1, err)
			}
			b.Runs = append(b.Runs, r)
			if r.ExitCode != 0 {
				b.Failures++
			}
		}
		b.stats()
		return b, nil
	}, nil
}

func (b *Benchmark) stats() {
	ds := make([]float64, len(b.Runs))
	sum := 0.0
	for i, r := range b.Runs {
		ds[i] = r.DurationMs
		sum += r.DurationMs
	}
	slices.Sort(ds)
	b.MinMs, b.MaxMs = ds[0], ds[len(ds)-1]
	b.MeanMs = sum / float64(len(ds))
	if len(ds)%2 == 1 {
		b.MedianMs = ds[len(ds)/2]
	} else {
		b.MedianMs = (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
	}
	v := 0.0
	for _, d := range ds {
		v += (d - b.MeanMs) * (d - b.MeanMs)
	}
	b.StddevMs = math.Sqrt(v / float64(len(ds)))
	for _, p := range []*float64{&b.MinMs, &b.MaxMs, &b.MeanMs, &b.MedianMs, &b.StddevMs} {
		*p = math.Round(*p*1000) / 1000
	}
}

const probeText = "write, fsync, read back and SHA-256 1 MiB in the temp directory"

// probe is one timed run of the default benchmark.
func probe() (run, error) {
	start := time.Now()
	f, err := os.CreateTemp("", "evokore-probe-*")
	if err != nil {
		return run{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 31)
	}
	if _, err := f.Write(buf); err != nil {
		return run{}, err
	}
	if err := f.Sync(); err != nil {
		return run{}, err
	}
	if _, err := f.ReadAt(buf, 0); err != nil {
		return run{}, err
	}
	sha256.Sum256(buf)
	return run{DurationMs: float64(time.Since(start).Microseconds()) / 1000}, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
