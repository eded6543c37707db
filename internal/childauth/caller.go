package childauth

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/session"
)

type callerKey struct{}

// WithCaller marks ctx as a call made by sess: when the child the call
// goes to needs authorization, the caller is the one asked.
func WithCaller(ctx context.Context, sess *session.Session) context.Context {
	if sess == nil {
		return ctx
	}
	return context.WithValue(ctx, callerKey{}, sess)
}

// How a caller can be asked to authorize a child.
const (
	askNone    = iota // it cannot: the call fails naming the command
	askRequest        // elicitation/create in URL mode over its session
	askError          // the URL elicitation error (-32042): a client of the sessionless era, asked in the answer
)

// askHow is how the caller of ctx can be asked.
func askHow(ctx context.Context) (session.Peer, int) {
	sess, _ := ctx.Value(callerKey{}).(*session.Session)
	if sess == nil || sess.Peer == nil {
		return nil, askNone
	}
	ip := sess.Peer.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil || ip.Capabilities.Elicitation.URL == nil {
		return nil, askNone
	}
	if sess.Stateless || era.Sessionless(ip.ProtocolVersion) {
		return nil, askError
	}
	return sess.Peer, askRequest
}

// elicitMessage is what the user reads beside the link.
func elicitMessage(id string) string {
	return fmt.Sprintf("evokore needs you to authorize it to the '%s' server: sign in on the page this link opens, then come back.", id)
}

// authorize has a user authorize evokore to the child, for a request the
// child refused: the terminal (`evokore auth login`), or the caller of
// the call by URL elicitation. nil means a token is now stored and the
// request may be sent again.
func (m *Manager) authorize(ctx context.Context, spec config.Server, ch *challenge) error {
	if m.opts.Open != nil {
		l, err := m.startLogin(spec, ch)
		if err != nil {
			return err
		}
		if err := m.opts.Open(ctx, l.url); err != nil {
			return err
		}
		return l.wait(ctx)
	}
	peer, how := askHow(ctx)
	if how == askNone {
		return &NeedsAuthorizationError{Server: spec.ID}
	}
	l, err := m.startLogin(spec, ch)
	if err != nil {
		return err
	}
	params := &mcp.ElicitParams{Mode: "url", Message: elicitMessage(spec.ID), URL: l.url, ElicitationID: l.id}
	if how == askError {
		// The client opens the link and sends the call again; by then
		// the login has stored the token.
		return mcp.URLElicitationRequiredError([]*mcp.ElicitParams{params})
	}
	res, err := peer.Elicit(ctx, params)
	if err != nil {
		return &NeedsAuthorizationError{Server: spec.ID, Reason: "the client could not be asked: " + err.Error()}
	}
	if res.Action != "accept" {
		return &NeedsAuthorizationError{Server: spec.ID, Reason: "the user did not authorize it (" + res.Action + ")"}
	}
	return l.wait(ctx)
}

// Required is the error a call to the child gets while it needs
// authorization and has no connection to answer on (it never booted): a
// caller that takes a URL elicitation is asked, as Authorize does; nil
// when that caller authorized it, and the child is booting again.
func (m *Manager) Required(ctx context.Context, spec config.Server) error {
	m.mu.Lock()
	ch := m.challenges[spec.ID]
	m.mu.Unlock()
	if ch == nil {
		return &NeedsAuthorizationError{Server: spec.ID}
	}
	return m.authorize(ctx, spec, ch)
}
