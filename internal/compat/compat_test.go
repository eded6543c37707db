package compat_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native/claims"
	"github.com/evokore/evokore/internal/native/fleet"
	"github.com/evokore/evokore/internal/native/orchestration"
	"github.com/evokore/evokore/internal/native/workers"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/router"
)

var update = flag.Bool("update", false, "rewrite testdata/texts.golden")

func TestCompatibilityTexts(t *testing.T) {
	boom := errors.New("boom")
	texts := []struct{ name, text string }{
		{"router.UnknownTool", router.UnknownTool("gh_x").Error()},
		{"policy.DeniedText", policy.DeniedText("gh_x")},
		{"policy.InterceptionText", policy.InterceptionText("gh_x", "0123456789abcdef")},
		{"policy.OperatorInterceptionText", policy.OperatorInterceptionText("gh_x", "0123456789abcdef")},
		{"policy.DeniedApprovalText", policy.DeniedApprovalText("gh_x", "0123456789abcdef")},
		{"policy.ToolRateLimitText", policy.ToolRateLimitText("gh", "x", 3)},
		{"policy.ServerRateLimitText", policy.ServerRateLimitText("gh", 3)},
		{"policy.CooldownText", policy.CooldownText("gh_x", 7)},
		{"proxy.MsgBootComplete", proxy.MsgBootComplete(3)},
		{"proxy.MsgChildBootFailed", proxy.MsgChildBootFailed("gh", boom)},
		{"proxy.MsgConnectTimeout", proxy.MsgConnectTimeout("gh", 30*time.Second)},
		{"proxy.MsgListTimeout", proxy.MsgListTimeout("gh", 30*time.Second)},
		{"proxy.MsgCallTimeout", proxy.MsgCallTimeout("x", "gh", time.Minute)},
		{"proxy.MsgReconnecting", proxy.MsgReconnecting("gh")},
		{"proxy.MsgDuplicate", proxy.MsgDuplicate("gh_x", "gh")},
		{"proxy.MsgProxied", proxy.MsgProxied("gh", 4, 1)},
		{"proxy.MsgCollisionSummary", proxy.MsgCollisionSummary("gh", 1)},
		{"proxy.MsgChildExited", proxy.MsgChildExited("gh", boom)},
		{"proxy.MsgDiedDuringCall", proxy.MsgDiedDuringCall("x", "gh")},
		{"proxy.MsgNoCommand", proxy.MsgNoCommand("gh")},
		{"config.UnresolvedError", (&config.UnresolvedError{Server: "gh", Key: "env.TOKEN", Placeholders: []string{"${GITHUB_TOKEN}"}}).Error()},
		{"fleet.UnknownAgentError", fleet.Message(&fleet.UnknownAgentError{ID: "agent-1"})},
		{"fleet.SpawnError", fleet.Message(&fleet.SpawnError{Command: "x", Err: boom})},
		{"fleet.ReleasedAgentError", fleet.Message(&fleet.ReleasedAgentError{ID: "agent-1"})},
		{"orchestration.UnknownRunError", orchestration.Message(&orchestration.UnknownRunError{ID: "ORCH-009"})},
		{"claims.ContendedError", (&claims.ContendedError{Resource: "db"}).Error()},
		{"workers.UnknownTypeError", (&workers.UnknownTypeError{Type: "x"}).Error()},
	}
	var b strings.Builder
	for _, x := range texts {
		fmt.Fprintf(&b, "== %s\n%s\n", x.name, x.text)
	}
	path := filepath.Join("testdata", "texts.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("compatibility texts changed; if on purpose, run go test ./internal/compat -update\ngot:\n%s", b.String())
	}
}
