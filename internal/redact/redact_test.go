package redact_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/redact"
	"github.com/evokore/evokore/internal/router"
)

func TestArgsMaskSecretKeysAtAnyDepthAndScrubEnvValues(t *testing.T) {
	srv := config.Server{ID: "gh", Command: "gh-mcp", Env: map[string]string{"GITHUB_TOKEN": "${GH_TOKEN}"}}
	env := config.NewEnv(map[string]string{"GH_TOKEN": "ghp_planted123"})
	s := redact.NewScrubber([][]string{srv.RedactPairs(env)}, "hook-secret")
	args := json.RawMessage(`{"query":"uses ghp_planted123 and hook-secret","Authorization":"Bearer x","nested":{"list":[{"apiKey":"k1"},{"ok":"fine"}]},"n":3}`)
	got, _ := json.Marshal(s.Call(&router.Call{}, args).Redacted)
	want := `{"Authorization":"[REDACTED]","n":3,"nested":{"list":[{"apiKey":"[REDACTED]"},{"ok":"fine"}]},"query":"uses ${GH_TOKEN} and [REDACTED]"}`
	if string(got) != want {
		t.Errorf("Args =\n%s\nwant\n%s", got, want)
	}
	if got := s.Call(&router.Call{}, json.RawMessage(`[1,2]`)); string(got.Redacted) != `{"_unreadable_bytes":5}` || got.Unreadable != 5 {
		t.Errorf("non-object args = %s (%d)", got.Redacted, got.Unreadable)
	}
	// A tool that echoes its secret argument does not leak it.
	call := s.Call(&router.Call{}, json.RawMessage(`{"password":"pw-123456","pin":1234,"deep":{"token":"tok-abcdef"}}`)).Scrubber
	if out := call.String("got pw-123456, tok-abcdef, ghp_planted123"); out != "got [REDACTED], [REDACTED], ${GH_TOKEN}" {
		t.Errorf("the call's scrubber gives %q", out)
	}
	if out := call.Bounded(strings.Repeat("é", 400), 11); out != "ééééé…" {
		t.Errorf("Bounded = %q", out)
	}
	var nilScrubber *redact.Scrubber
	if nilScrubber.String("x") != "x" {
		t.Error("a nil scrubber changes text")
	}
}

// SecretKey's ASCII shortcut decides exactly as the rule's regexp, for
// every name built from the rule's words, their neighbours and case
// changes, and hands non-ASCII names to the regexp (case folding).
func TestSecretKeyMatchesTheRule(t *testing.T) {
	rule := regexp.MustCompile(`(?i)(pass(word|wd|phrase)?|secret|token|key|auth|credential|cookie|session[-_]?id|signature|bearer|private|jwt|otp|pin$)`)
	parts := []string{"", "pass", "PassWord", "secret", "tok", "token", "KEY", "ke", "auth", "Credential", "cookie",
		"session", "sessionId", "session-ID", "session_id", "session.id", "signature", "bearer", "private", "jwt",
		"otp", "pin", "PIN", "pinned", "spin", "x", "_", "-", "name", "path", "query", "é", "\u212a" + "ey", "ſecret"}
	n := 0
	for _, a := range parts {
		for _, b := range parts {
			for _, c := range []string{"", "pin", "s", "Pin"} {
				name := a + b + c
				if got, want := redact.SecretKey(name), rule.MatchString(name); got != want {
					t.Errorf("SecretKey(%q) = %v, the rule says %v", name, got, want)
				}
				n++
			}
		}
	}
	if n < 4000 {
		t.Fatalf("only %d names checked", n)
	}
}
