package main

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// A command that already showed its failure (vet's diagnostics, a hook's
// block reason) exits with its code and adds nothing to stderr; any other
// error is said once, with its code.
func TestExitCodeSaysWhatWasNotYetSaid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"reported", reported(2), 2, ""},
		{"wrapped reported", fmt.Errorf("hook: %w", reported(1)), 1, ""},
		{"with a reason", &exitError{1, errors.New("listen on :1: refused")}, 1, "evokore: listen on :1: refused\n"},
		{"usage", errors.New(`unknown command "x" for "evokore"`), 2, "evokore: unknown command \"x\" for \"evokore\"\n"},
		{"plain", errors.New("boom"), 1, "evokore: boom\n"},
	} {
		var w bytes.Buffer
		if code := exitCode(tc.err, &w); code != tc.code || w.String() != tc.stderr {
			t.Errorf("%s: exit %d with %q, want %d with %q", tc.name, code, w.String(), tc.code, tc.stderr)
		}
	}
	if reported(1).Error() == "" {
		t.Error("an exitError's text is never empty")
	}
}
