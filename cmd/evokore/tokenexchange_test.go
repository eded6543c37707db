package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/oauthtest"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// Token exchange (issue 48, per-subject upstream credentials): a
// subject-scoped HTTP child whose oauth.grant is "token_exchange" is
// reached, on each caller's calls, with a token its authorization
// server issued in exchange for that caller's own bearer token (RFC
// 8693). alice's calls reach the recording child with a token issued
// for alice, bob's with one issued for bob, exchanged once each and
// never shown to the other; no one is asked to consent. When the child
// refuses alice's exchanged token, her next call exchanges again. carol, whose
// token the router accepts but the authorization server no longer
// trusts, is told the exchange was refused and why (its error code),
// her token named nowhere, and her call never reaches the child.
func TestTokenExchangeReachesTheChildAsEachCaller(t *testing.T) {
	x := oauthtest.NewExchanger(t, "evokore")
	child := x.NewChild(t)
	bin := testutil.Evokore(t)
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"remote": map[string]any{
		"type": "http", "url": child.URL, "scope": "subject", "cooldownMs": 0,
		"oauth": map[string]any{"grant": "token_exchange", "clientId": x.ClientID, "clientSecret": "${REMOTE_SECRET}"},
	}}})
	home := filepath.Join(dir, "home")
	r := startReplica(t, bin, home, []string{"EVOKORE_MCP_CONFIG_PATH=" + cfg, "REMOTE_SECRET=" + x.ClientSecret,
		"EVOKORE_TOOL_DISCOVERY_MODE=legacy", "EVOKORE_AUTH_REQUIRED=true", "EVOKORE_AUTH_MODE=jwt",
		"EVOKORE_OAUTH_JWKS_URI=" + x.JWKSURL, "EVOKORE_OAUTH_ISSUER=" + x.Issuer, "EVOKORE_OAUTH_AUDIENCE=evokore",
		"EVOKORE_TENANT_SCOPING=true"})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("router output:\n%s", r.out.String())
		}
	})
	base := "http://" + r.addr
	noConsent := func(context.Context, string) string {
		t.Errorf("a caller was asked to consent")
		return "decline"
	}
	caller := func(who string) *subjectCaller {
		return &subjectCaller{t: t, who: who, token: x.Inbound(t, who, map[string]any{"role": "admin"}), answer: noConsent}
	}
	alice, bob, carol := caller("alice"), caller("bob"), caller("carol")

	sessions := map[*subjectCaller]*mcp.ClientSession{alice: alice.session(base), bob: bob.session(base)}
	waitTools(t, sessions[alice], "remote_record")
	for _, c := range []*subjectCaller{alice, bob, alice, bob} {
		if res := c.record(sessions[c]); res.IsError || routertest.Text(res) != "recorded "+c.who {
			t.Fatalf("%s's call: %s", c.who, routertest.Text(res))
		}
	}

	// The child refuses alice's exchanged token (it ended early): her
	// next call exchanges her own token again, and goes.
	first := child.Calls()[0]
	x.Expire(first.Token)
	if res := alice.record(sessions[alice]); res.IsError {
		t.Fatalf("alice's call after the child refused her token: %s", routertest.Text(res))
	}
	if last := child.Calls()[len(child.Calls())-1]; last.Who != "alice" || last.Subject != "alice" || last.Token == first.Token {
		t.Errorf("alice's call after her token was refused went as %q, with the refused token: %v", last.Subject, last.Token == first.Token)
	}

	x.Revoke(t, carol.token)
	res := carol.record(carol.session(base))
	msg := routertest.Text(res)
	if !res.IsError || !strings.Contains(msg, "'remote'") || !strings.Contains(msg, "invalid_grant") || strings.Contains(msg, carol.token) {
		t.Errorf("carol's refused exchange: %s", msg)
	}

	// Over stdio the caller has no token of its own to trade.
	stdio := exec.Command(bin, "serve")
	stdio.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "stdio"),
		"EVOKORE_MCP_CONFIG_PATH=" + cfg, "REMOTE_SECRET=" + x.ClientSecret, "EVOKORE_TOOL_DISCOVERY_MODE=legacy"}
	ss, err := mcp.NewClient(&mcp.Implementation{Name: "stdio", Version: "1"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: stdio, TerminateDuration: 5 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	waitTools(t, ss, "remote_record")
	res = routertest.Call(t, ss, "remote_record", map[string]any{"who": "stdio"})
	if msg := routertest.Text(res); !res.IsError || !strings.Contains(msg, "this caller has none") {
		t.Errorf("a stdio caller's call: %s", msg)
	}

	byWho := map[string][]oauthtest.Call{}
	for _, c := range child.Calls() {
		byWho[c.Who] = append(byWho[c.Who], c)
	}
	for _, who := range []string{"carol", "stdio"} {
		if len(byWho[who]) != 0 {
			t.Errorf("%s's call reached the child: %+v", who, byWho[who])
		}
	}
	for _, who := range []*subjectCaller{alice, bob} {
		calls := byWho[who.who]
		if len(calls) < 2 {
			t.Fatalf("%s's calls recorded: %d, want 2", who.who, len(calls))
		}
		for _, c := range calls[:2] {
			if c.Subject != who.who || c.Token == who.token || c.Token != calls[0].Token {
				t.Errorf("%s's call went as %q (its own inbound token: %v, same token each call: %v)", who.who, c.Subject, c.Token == who.token, c.Token == calls[0].Token)
			}
		}
	}
	t.Logf("carol was told: %s", msg)
	if byWho["alice"][0].Token == byWho["bob"][0].Token {
		t.Errorf("alice and bob reached the child with the same token")
	}
	if got := x.Exchanged(); !slices.Equal(got, []string{"alice", "bob", "alice"}) {
		t.Errorf("exchanges answered for %v, want alice then bob once each (the token is kept until it expires), then alice once more after the child refused hers", got)
	}
	out := r.out.String()
	for _, c := range []*subjectCaller{alice, bob, carol} {
		if strings.Contains(out, c.token) {
			t.Errorf("the router's output holds %s's token", c.who)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(home, "oauth", "*")); len(files) != 0 {
		t.Errorf("exchanged tokens were written to files: %v", files)
	}
}
