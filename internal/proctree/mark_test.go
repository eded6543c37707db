package proctree

import "testing"

// The watchdog kills every process whose environment starts with its
// mark, so it takes only a whole tree mark: an empty value or another
// variable's name would reach the user's other processes.
func TestTheWatchdogTakesOnlyATreeMark(t *testing.T) {
	for mark, want := range map[string]bool{
		"EVOKORE_PROCTREE_0a1b2c3d4e5f=": true,
		"":                               false,
		"=":                              false,
		"PATH=":                          false,
		"EVOKORE_PROCTREE_=":             false,
		"EVOKORE_PROCTREE_":              false,
		"EVOKORE_PROCTREE_0a1b":          false,
		"EVOKORE_PROCTREE_0a1b=1":        false,
		"EVOKORE_PROCTREE_0A1B=":         false,
		"EVOKORE_PROCTREE_0a 1b=":        false,
		"EVOKORE_PROCTREE_0a1b==":        false,
	} {
		if got := treeMark([]byte(mark)); got != want {
			t.Errorf("treeMark(%q) = %v, want %v", mark, got, want)
		}
	}
}
