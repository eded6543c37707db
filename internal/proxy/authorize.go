package proxy

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/childauth"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/status"
)

// StatusNeedsAuthorization is a child whose server wants a user to
// authorize evokore (package childauth) before it answers.
const StatusNeedsAuthorization = status.NeedsAuthorization

// Authorizer authorizes the router to its HTTP children; package
// childauth's Manager is the one.
//
// Each method takes the owner whose authorization it is: "" for a
// shared child (the router's own), the caller's (childauth.OwnerOf) for
// a caller's instance of a subject or session child, whose tokens,
// logins and prompts are that caller's alone.
type Authorizer interface {
	// Handler is the OAuth handler of a transport to the child (as
	// configured), nil when evokore does not authorize itself to it.
	Handler(spec config.Server, owner childauth.Owner) auth.OAuthHandler
	// Changed is closed when the child's authorization changes.
	Changed(id string, owner childauth.Owner) <-chan struct{}
	// Required is the answer to a call of a child that needs
	// authorization and has no connection (see childauth).
	Required(ctx context.Context, spec config.Server, owner childauth.Owner) error
	// NeedsAuthorization reports whether the child's last request
	// found no usable token.
	NeedsAuthorization(id string, owner childauth.Owner) bool
}

// authOwner is whose authorization the child's connection uses: its
// caller's for an instance, the router's own ("") otherwise.
func (c *child) authOwner() childauth.Owner {
	if c.inst == nil {
		return ""
	}
	return c.inst.owner
}

// needsAuthorization reports whether a boot failed for want of a user's
// authorization.
func needsAuthorization(err error) bool { return errors.Is(err, childauth.ErrNeedsAuthorization) }

// awaitAuthorization waits, after a boot that needed authorization, for
// the child's authorization to change (a login), instead of retrying
// against a server that will refuse again: false when ctx ended.
func (c *child) awaitAuthorization(ctx context.Context, changed <-chan struct{}) bool {
	if c.authOwner() != "" {
		c.sup.log.Info("[EVOKORE] A caller's instance of a server needs that caller's authorization; their next call asks them", "server", c.spec.ID)
	} else {
		c.sup.log.Info("[EVOKORE] A server needs authorization; waiting for `evokore auth login "+c.spec.ID+"`", "server", c.spec.ID)
	}
	select {
	case <-ctx.Done():
		return false
	case <-changed:
		return true
	}
}

// authChanged is what a boot's failure for want of authorization waits
// on, taken before the boot so that no login is missed.
func (c *child) authChanged() <-chan struct{} {
	if a := c.sup.opts.Authorizer; a != nil && c.spec.IsHTTP() {
		return a.Changed(c.spec.ID, c.authOwner())
	}
	return nil
}

// authorizeForCall answers a call of a child that needs authorization:
// its caller is asked (childauth), and once it authorized the child, the
// call waits for the child's new boot as for a booting child.
func (c *child) authorizeForCall(ctx context.Context) (*conn, error) {
	a := c.sup.opts.Authorizer
	if a == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: MsgReconnecting(c.spec.ID)}
	}
	if err := a.Required(ctx, c.spec, c.authOwner()); err != nil {
		return nil, err
	}
	t := time.NewTimer(c.sup.bootTimeout(c.spec))
	defer t.Stop()
	for {
		c.mu.Lock()
		state, changed, k := c.state, c.changed, c.conn
		c.mu.Unlock()
		if state == StatusConnected && k != nil {
			return k, nil
		}
		if state == StatusError {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: MsgReconnecting(c.spec.ID)}
		}
		select {
		case <-changed:
		case <-t.C:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: MsgReconnecting(c.spec.ID)}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// authStatus is the state the child reports: a connected child whose
// token its server refused needs authorization too.
func (c *child) authStatus(state string) string {
	if a := c.sup.opts.Authorizer; a != nil && state == StatusConnected && c.spec.IsHTTP() && a.NeedsAuthorization(c.spec.ID, c.authOwner()) {
		return StatusNeedsAuthorization
	}
	return state
}

// authFailure is a call's answer when its child needs authorization: a
// result the model reads, naming the command; a URL elicitation error
// goes to the client as it is.
func authFailure(err error) (*mcp.CallToolResult, error) {
	var na *childauth.NeedsAuthorizationError
	if errors.As(err, &na) {
		return errorResult(na.Error()), nil
	}
	// The SDK's transport wraps Authorize's error after its own
	// "rejected by transport", itself a JSON-RPC error: the URL
	// elicitation is looked for by its code.
	if we := wireErrorWithCode(err, mcp.CodeURLElicitationRequired); we != nil {
		return nil, we
	}
	return nil, err
}

// childAnswer is how a call's failure reaches the client when the child
// answered it: a child that needs authorization as authFailure says, a
// JSON-RPC error of the child's with its code. ok is false for any other
// failure.
func childAnswer(err error) (*mcp.CallToolResult, bool, error) {
	if r, aerr := authFailure(err); r != nil || aerr != err {
		return r, true, aerr
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return nil, true, we
	}
	return nil, false, nil
}

// wireErrorWithCode is the JSON-RPC error of that code in err's chain.
func wireErrorWithCode(err error, code int64) *jsonrpc.Error {
	if we, ok := err.(*jsonrpc.Error); ok && we.Code == code {
		return we
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if next := u.Unwrap(); next != nil {
			return wireErrorWithCode(next, code)
		}
	case interface{ Unwrap() []error }:
		for _, next := range u.Unwrap() {
			if we := wireErrorWithCode(next, code); we != nil {
				return we
			}
		}
	}
	return nil
}
