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

// callerOwner is the owner of the tokens of ctx's caller (OwnerOf its
// identity); "" without a caller.
func callerOwner(ctx context.Context) Owner {
	sess, _ := ctx.Value(callerKey{}).(*session.Session)
	if sess == nil {
		return ""
	}
	return OwnerOf(sess.Identity.Tenant, sess.Identity.Subject)
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
func (m *Manager) authorize(ctx context.Context, p principal, ch *challenge) error {
	spec := p.spec
	if m.opts.Open != nil {
		l, err := m.startLogin(p, ch)
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
		return p.needs("")
	}
	if p.owner != "" && callerOwner(ctx) != p.owner {
		// A caller's login is asked of that caller only: whoever else
		// makes this call is told, and never shown the link.
		return p.needs("only the caller whose authorization it is can give it")
	}
	l, err := m.startLogin(p, ch)
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
		return p.needs("the client could not be asked: " + err.Error())
	}
	if res.Action != "accept" {
		return p.needs("the user did not authorize it (" + res.Action + ")")
	}
	return l.wait(ctx)
}

// Required is the error a call to the child gets while owner's
// authorization to it is needed and it has no connection to answer on
// (it never booted): a caller that takes a URL elicitation is asked, as
// Authorize does; nil when that caller authorized it, or a token for
// owner was stored since (a login completed on another replica), and
// the child is booting again.
func (m *Manager) Required(ctx context.Context, spec config.Server, owner Owner) error {
	p := principal{spec: spec, owner: owner}
	if exchanges(spec) && owner != "" {
		return m.requiredExchange(ctx, p)
	}
	e, err := m.load(p)
	if err != nil {
		return p.needs(err.Error())
	}
	if e.HasTokens() {
		if src := m.source(p); !src.holds() {
			m.setNeeds(p.key(), false)
			m.notify(p.key())
			return nil
		}
	}
	m.mu.Lock()
	ch := m.challenges[p.key()]
	m.mu.Unlock()
	if ch == nil {
		return p.needs("")
	}
	return m.authorize(ctx, p, ch)
}
