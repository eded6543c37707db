// Command testreport runs `go test -json ...` (the command named by its
// arguments), prints what a plain `go test` would (the package lines, and
// the output of failing tests only), then how many tests were skipped and
// why, and exits with go test's exit code. `make test` runs the suite
// through it, so a skip is never silent:
//
//	go run ./internal/testutil/testreport go test -json -race ./...
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testreport go test -json [flags] [packages]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	// An interrupt reaches go test through the terminal's process group;
	// this process stays to print what ran until then.
	signal.Ignore(os.Interrupt)
	w := bufio.NewWriter(os.Stdout)
	skips := report(out, w, flush(w))
	err = cmd.Wait()
	summarize(w, skips, modulePrefix())
	_ = w.Flush()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		os.Exit(ee.ExitCode())
	case err != nil:
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
}

// flush returns a function that pushes w's buffer out, so a package's
// line appears when it finishes, not when the run does.
func flush(w *bufio.Writer) func() { return func() { _ = w.Flush() } }

// event is one line of `go test -json` (cmd/test2json): actions start,
// run, pause, cont, output, pass, fail, skip, bench, and the build's
// build-output and build-fail.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// skip is one skipped test and the last line it wrote: t.Skip's reason.
type skip struct {
	pkg, test, reason string
}

// progress lines of -v that a plain go test does not print.
var quiet = []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"}

// report copies the run's output from r to w as a plain go test prints it
// and returns the skipped tests. done is called after each package line.
func report(r io.Reader, w io.Writer, done func()) []skip {
	rp := &reporter{w: w, done: done, pending: map[string]map[string][]string{}, last: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Test == "":
			rp.packageEvent(e)
		case e.Action == "output":
			rp.testOutput(e)
		case e.Action == "skip" || e.Action == "pass" || e.Action == "fail":
			rp.testEnd(e)
		}
	}
	return rp.skips
}

// reporter is report's state over one run.
type reporter struct {
	w    io.Writer
	done func()
	// pending holds the output of the top-level tests still running, per
	// package and test, printed only if the test fails; last is every
	// test's last line, for a skip's reason.
	pending map[string]map[string][]string
	last    map[string]string
	skips   []skip
}

// packageEvent handles a package's own event: its output line (the end
// of a package calls done), and its end, which prints the output of the
// tests a failing package left unfinished (a timeout's panic, a crash).
func (rp *reporter) packageEvent(e event) {
	switch e.Action {
	case "output":
		if e.Output != "PASS\n" {
			fmt.Fprint(rp.w, e.Output)
		}
		if strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL\t") || strings.HasPrefix(e.Output, "?") {
			rp.done()
		}
	case "fail":
		for _, lines := range rp.pending[e.Package] {
			fmt.Fprint(rp.w, strings.Join(lines, ""))
		}
		delete(rp.pending, e.Package)
	case "pass", "skip":
		delete(rp.pending, e.Package)
	}
}

// testOutput keeps a line a test wrote, under its top-level test, unless
// it is a progress line; and notes it as the test's last words.
func (rp *reporter) testOutput(e event) {
	if isQuiet(e.Output) {
		return
	}
	top, _, _ := strings.Cut(e.Test, "/")
	if rp.pending[e.Package] == nil {
		rp.pending[e.Package] = map[string][]string{}
	}
	rp.pending[e.Package][top] = append(rp.pending[e.Package][top], e.Output)
	if s := strings.TrimSpace(e.Output); s != "" && !strings.HasPrefix(s, "--- ") {
		rp.last[e.Package+" "+e.Test] = s
	}
}

// testEnd records a skip with its reason, and at the end of a top-level
// test prints its output if it failed and forgets it.
func (rp *reporter) testEnd(e event) {
	key := e.Package + " " + e.Test
	if e.Action == "skip" {
		rp.skips = append(rp.skips, skip{pkg: e.Package, test: e.Test, reason: rp.last[key]})
	}
	delete(rp.last, key)
	top, _, _ := strings.Cut(e.Test, "/")
	if e.Test != top {
		return
	}
	if e.Action == "fail" {
		printFailure(rp.w, top, rp.pending[e.Package][top])
	}
	delete(rp.pending[e.Package], top)
}

// printFailure prints a failed test's output with its "--- FAIL" line
// first, as a plain go test does (-json streams it last).
func printFailure(w io.Writer, test string, lines []string) {
	head := "--- FAIL: " + test + " ("
	for i, l := range lines {
		if strings.HasPrefix(l, head) {
			fmt.Fprint(w, l)
			lines = append(lines[:i:i], lines[i+1:]...)
			break
		}
	}
	fmt.Fprint(w, strings.Join(lines, ""))
}

func isQuiet(line string) bool {
	for _, p := range quiet {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// position is the file:line t.Skip puts before its reason.
var position = regexp.MustCompile(`^\S+\.go:\d+: `)

// summarize prints the number of skipped tests, then each reason with
// the tests it skipped, most frequent first.
func summarize(w io.Writer, skips []skip, module string) {
	if len(skips) == 0 {
		fmt.Fprintln(w, "skipped: none")
		return
	}
	byReason := map[string][]string{}
	for _, s := range skips {
		reason := position.ReplaceAllString(s.reason, "")
		if reason == "" {
			reason = "(no reason given)"
		}
		byReason[reason] = append(byReason[reason], strings.TrimPrefix(s.pkg, module)+" "+s.test)
	}
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		a, b := byReason[reasons[i]], byReason[reasons[j]]
		if len(a) != len(b) {
			return len(a) > len(b)
		}
		return reasons[i] < reasons[j]
	})
	noun := "tests"
	if len(skips) == 1 {
		noun = "test"
	}
	fmt.Fprintf(w, "skipped: %d %s\n", len(skips), noun)
	for _, r := range reasons {
		fmt.Fprintf(w, "  %d × %s\n", len(byReason[r]), r)
		for _, t := range byReason[r] {
			fmt.Fprintf(w, "      %s\n", t)
		}
	}
}

// modulePrefix is "<module path>/" from go.mod in the working directory,
// trimmed from package names in the summary; "" without one.
func modulePrefix() string {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`) + "/"
		}
	}
	return ""
}
