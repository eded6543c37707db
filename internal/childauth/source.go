package childauth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/evokore/evokore/internal/config"
)

// storedSource is the token source of a child authorized by a user: the
// token in the store, refreshed before it expires, each refresh written
// back. It reads the store again whenever its own token is not fresh, so
// a login made by another process (`evokore auth login`) is picked up.
type storedSource struct {
	m *Manager
	p principal

	mu  sync.Mutex
	cur *Entry
}

// Token returns a fresh access token. A refresh token the server refuses
// (revoked, expired) is forgotten and answered with oauth2's
// invalid_grant error: the transport then sends the request without a
// token, and the child's 401 leads to Authorize, which asks for a new
// authorization instead of retrying the refresh.
func (s *storedSource) Token() (*oauth2.Token, error) { return s.token("") }

// token is Token treating the access token refused (one the server
// rejected before its expiry) as spent.
func (s *storedSource) token(refused string) (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	usable := func(e *Entry) bool { return e.fresh(now) && e.Token.AccessToken != refused }
	if usable(s.cur) {
		return copyToken(s.cur.Token), nil
	}
	id := s.p.spec.ID
	unlock, err := s.m.lockTokens(s.p)
	if err != nil {
		return nil, fmt.Errorf("the '%s' server's tokens: %v", id, err)
	}
	defer unlock()
	e, err := s.m.load(s.p)
	if err != nil {
		return nil, fmt.Errorf("the '%s' server's tokens: %v", id, err)
	}
	if usable(e) {
		s.cur = e
		return copyToken(e.Token), nil
	}
	if e == nil || e.Token == nil || e.Token.RefreshToken == "" {
		s.cur = nil
		s.m.setNeeds(s.p.key(), true)
		return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "no token: the server needs authorization"}
	}
	tok, err := s.refresh(e)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			// Revoked or expired: a new authorization is needed, and
			// never another try with this refresh token.
			e.Token = nil
			_ = s.m.save(s.p, e)
			s.cur = nil
			s.m.setNeeds(s.p.key(), true)
			s.m.log.Info("[EVOKORE] A server refused evokore's refresh token; it needs authorization again", "server", id)
			return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "the refresh token was refused"}
		}
		return nil, fmt.Errorf("refreshing the '%s' server's token: %s", id, safeError(err))
	}
	if tok.RefreshToken == "" {
		// A server that does not rotate refresh tokens sends none back.
		tok.RefreshToken = e.Token.RefreshToken
	}
	e.Token, e.Obtained = tok, now
	if granted := grantedScopes(tok); granted != nil {
		e.Scopes = granted
	}
	if err := s.m.save(s.p, e); err != nil {
		s.m.log.Info("[EVOKORE] Cannot save a refreshed token", "server", id, "err", err)
	}
	s.cur = e
	return copyToken(tok), nil
}

// refresh spends e's refresh token at its token endpoint.
func (s *storedSource) refresh(e *Entry) (*oauth2.Token, error) {
	resolved, err := s.p.spec.Resolve(s.m.opts.Env)
	if err != nil {
		return nil, err
	}
	cfg := e.config(resolved)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, s.m.httpClient(s.p.spec))
	old := &oauth2.Token{RefreshToken: e.Token.RefreshToken, Expiry: time.Unix(1, 0)}
	return cfg.TokenSource(ctx, old).Token()
}

// config is the oauth2 client of the entry: its registration, with a
// configured secret read from spec (resolved).
func (e *Entry) config(spec config.Server) *oauth2.Config {
	secret := e.ClientSecret
	if o := spec.OAuth; o != nil && o.ClientSecret != "" && o.ClientID == e.ClientID {
		secret = o.ClientSecret
	}
	return &oauth2.Config{
		ClientID:     e.ClientID,
		ClientSecret: secret,
		Endpoint:     oauth2.Endpoint{AuthURL: e.AuthURL, TokenURL: e.TokenURL, AuthStyle: e.AuthStyle},
		Scopes:       e.Scopes,
	}
}

// holds reports whether the source holds a token to use or refresh.
func (s *storedSource) holds() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur.HasTokens()
}

// reset drops the token the source holds, after a login or a logout.
func (s *storedSource) reset() {
	s.mu.Lock()
	s.cur = nil
	s.mu.Unlock()
}

func copyToken(t *oauth2.Token) *oauth2.Token {
	c := *t
	return &c
}

// grantedScopes are the scopes a token response granted (RFC 6749 §5.1),
// nil when it does not say.
func grantedScopes(t *oauth2.Token) []string {
	s, ok := t.Extra("scope").(string)
	if !ok {
		return nil
	}
	return strings.Fields(s)
}

// union is a and b without repeats, a's order first.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// safeError is an error's text for a log or a message: an oauth2
// RetrieveError carries the token endpoint's whole body, which is no
// business of a log, so only its code and description are kept.
func safeError(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		msg := "the token endpoint refused"
		if re.ErrorCode != "" {
			msg += " (" + re.ErrorCode + ")"
		} else if re.Response != nil {
			msg += " (" + re.Response.Status + ")"
		}
		if re.ErrorDescription != "" {
			msg += ": " + re.ErrorDescription
		}
		return msg
	}
	return err.Error()
}
