// Package sample is the suite testreport's own test runs: one test of
// each outcome.
package sample

import "testing"

func TestPasses(t *testing.T) {
	t.Log("a passing test's log line")
}

func TestSkips(t *testing.T) {
	t.Log("said before the skip")
	t.Skip("no widget here")
}

func TestSubtestSkips(t *testing.T) {
	t.Run("inner", func(t *testing.T) { t.Skip("no widget here") })
	t.Run("other", func(t *testing.T) { t.Skipf("no %s here", "gadget") })
}

func TestFails(t *testing.T) {
	t.Error("the widget broke")
}
