package main_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

// A run through testreport reads like a plain go test (no progress
// lines, no passing test's output, a failing test's output), ends with
// the skipped tests grouped by reason, and keeps go test's exit code.
func TestReportShowsFailuresAndSummarizesSkips(t *testing.T) {
	bin := testutil.Build(t, "./internal/testutil/testreport", "testreport")
	cmd := exec.Command(bin, "go", "test", "-json", "-count=1", "./internal/testutil/testreport/testdata/sample")
	cmd.Dir = testutil.Root(t)
	b, err := cmd.Output()
	out := string(b)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want go test's 1\n%s", err, out)
	}
	for _, want := range []string{
		"--- FAIL: TestFails",
		"sample_test.go:22: the widget broke",
		"FAIL\tgithub.com/evokore/evokore/internal/testutil/testreport/testdata/sample",
		"skipped: 3 tests\n" +
			"  2 × no widget here\n" +
			"      internal/testutil/testreport/testdata/sample TestSkips\n" +
			"      internal/testutil/testreport/testdata/sample TestSubtestSkips/inner\n" +
			"  1 × no gadget here\n" +
			"      internal/testutil/testreport/testdata/sample TestSubtestSkips/other\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "--- FAIL: TestFails") > strings.Index(out, "the widget broke") {
		t.Errorf("a failure's --- FAIL line should come before its output:\n%s", out)
	}
	for _, unwanted := range []string{"=== RUN", "a passing test's log line", "said before the skip", "--- SKIP"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("output has %q, which a plain go test does not print:\n%s", unwanted, out)
		}
	}
}
