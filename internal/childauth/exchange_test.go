package childauth_test

import (
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/childauth"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/session"
)

// A token exchange child takes only a caller who has a token of their
// own to trade, in an instance of their own: a shared child (one token
// for everyone) and a caller without a bearer token (stdio, HTTP
// without authentication) are refused, naming the child.
func TestTokenExchangeRefusesWhoHasNoTokenToTrade(t *testing.T) {
	spec := func(scope string) config.Server {
		return config.Server{ID: "remote", Transport: config.TransportHTTP, URL: "https://remote.example/mcp", Scope: scope,
			OAuth: &config.OAuth{Grant: config.GrantTokenExchange, ClientID: "gw", ClientSecret: "${S}"}}
	}
	caller := func(subject, token string) *session.Session {
		s := session.New("s1", "")
		s.Identity = session.Identity{Subject: subject, Tenant: "team"}
		s.SetInbound(token)
		return s
	}
	for name, c := range map[string]struct {
		spec config.Server
		sess *session.Session
		want string
	}{
		"shared child":          {spec(config.ScopeShared), caller("alice", "tok-a"), "a shared child cannot"},
		"stdio caller":          {spec(config.ScopeSubject), caller("", ""), "this caller has none"},
		"no session":            {spec(config.ScopeSubject), nil, "this caller has none"},
		"subject without token": {spec(config.ScopeSubject), caller("alice", ""), "this caller has none"},
		"subject with token":    {spec(config.ScopeSubject), caller("alice", "tok-a"), ""},
	} {
		got := childauth.CallerRefusal(c.spec, c.sess)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) || (got != "" && !strings.Contains(got, "'remote'")) {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
		if strings.Contains(got, "tok-a") {
			t.Errorf("%s: the refusal names the caller's token", name)
		}
	}
	plain := spec(config.ScopeShared)
	plain.OAuth.Grant = ""
	if got := childauth.CallerRefusal(plain, nil); got != "" {
		t.Errorf("a child that does not exchange: %q", got)
	}
}
