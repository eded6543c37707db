package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
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

// The package doc's usage lists every command the binary has, and no
// other.
func TestUsageDocListsEveryCommand(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := strings.Cut(string(src), "package main")
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^//\tevokore \[?([a-z-]+)`).FindAllStringSubmatch(doc, -1) {
		listed[m[1]] = true
	}
	for _, c := range newRoot().Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if !listed[c.Name()] {
			t.Errorf("main.go's doc does not list %q", c.Name())
		}
		delete(listed, c.Name())
	}
	for name := range listed {
		t.Errorf("main.go's doc lists %q, which is no command", name)
	}
}
