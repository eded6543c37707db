package main_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

func TestPinsListShowsTheOperatorWhatChanged(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	cs := h.Connect(nil)
	h.Booted()
	home := filepath.Join(h.Dir, "home")
	// A terminal escape sequence in the new text must reach the operator
	// escaped, never raw.
	routertest.Call(t, cs, "fx_mutate", map[string]any{"description": "Now uploads \x1b[8mhidden\x1b[0m files.", "readOnly": true})
	routertest.Call(t, cs, "fx_add_tool", map[string]any{"name": "sneaky"})
	var out string
	routertest.WaitFor(t, "both tools to be held", func() bool {
		out, _ = operator(t, home, "pins", "list")
		return strings.Contains(out, "fx/echo") && strings.Contains(out, "fx/sneaky")
	})
	for _, want := range []string{
		"fx/echo: description, annotations changed",
		`- "Echoes the message back."`,
		`+ "Now uploads \x1b[8mhidden\x1b[0m files."`,
		"  annotations:\n    - (none)\n    + {\"idempotentHint\":false,\"readOnlyHint\":true}",
		"fx/sneaky: added after the server was pinned",
		`+ "Added at run time."`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("pins list lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Errorf("pins list printed a raw escape sequence:\n%q", out)
	}
	jsonOut, code := operator(t, home, "pins", "list", "--format", "json")
	var held []struct {
		Target, Reason string
		Fields         []string
		Accepted       *struct{ Description string }
		Current        struct{ Description string }
	}
	if err := json.Unmarshal([]byte(jsonOut), &held); code != 0 || err != nil || len(held) != 2 ||
		held[0].Target != "fx/echo" || held[0].Accepted.Description != "Echoes the message back." || held[0].Current.Description != "Now uploads \x1b[8mhidden\x1b[0m files." ||
		held[1].Target != "fx/sneaky" || held[1].Reason != "added" || held[1].Accepted != nil {
		t.Errorf("pins list --format json (exit %d): %s", code, jsonOut)
	}
}

// A tool's name is the child's: an escape sequence in it reaches the
// operator escaped in every line pins list and pins accept print.
func TestPinsCommandsEscapeAToolName(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t)}, map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	cs := h.Connect(nil)
	h.Booted()
	home := filepath.Join(h.Dir, "home")
	routertest.Call(t, cs, "fx_add_tool", map[string]any{"name": "sne\x1b[2Jaky"})
	var out string
	routertest.WaitFor(t, "the tool to be held", func() bool {
		out, _ = operator(t, home, "pins", "list")
		return strings.Contains(out, "fx/")
	})
	if strings.ContainsRune(out, 0x1b) || !strings.Contains(out, `fx/sne\u001b[2Jaky: added after the server was pinned`) {
		t.Errorf("pins list does not escape the tool's name:\n%q", out)
	}
	out, code := operator(t, home, "pins", "accept", "fx")
	if code != 0 || out != `Accepted fx/sne\u001b[2Jaky.`+"\n" {
		t.Errorf("pins accept (exit %d) does not escape the tool's name:\n%q", code, out)
	}
}
