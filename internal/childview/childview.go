// Package childview is what one session sees of the child servers'
// prompts, resources, templates and completions, and the routing of its
// requests for them to the child that serves them.
//
// The children's prompts, resources and templates are served next to the
// router's own (see package proxy for how they are named and routed). The
// router's own come first and win: a child cannot shadow a native prompt,
// nor list or answer a URI under the schemes the router serves itself, so
// no child can stand in for evokore://server/config.
//
// What a session sees of a child follows the server's permission rules
// (docs/decisions.md): a prompt is named like a tool ("<prefix>_<name>")
// and the rule or role override of that name applies to it, deny hiding
// it; resources, templates, subscriptions and completions of a server are
// served while the session may call at least one of the server's tools
// (or the server has none). Under an undefined role nothing of a child is
// served, as no child tool is.
package childview

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// Children is the children's content as sessions see it. Its parts are
// the router's own; it holds no state.
type Children struct {
	Proxy   *proxy.Supervisor
	Catalog *catalog.Store
	// Rules are the permission rules in force (they change on reload).
	Rules func() *policy.RBAC
	// Own are the router's own prompts, which children cannot shadow.
	Own func() []*mcp.Prompt
}

// reservedSchemes are the URI schemes only the router serves.
var reservedSchemes = []string{"evokore:", "skill:"}

func reservedURI(uri string) bool {
	for _, s := range reservedSchemes {
		if strings.HasPrefix(strings.ToLower(uri), s) {
			return true
		}
	}
	return false
}

// roleUndefined reports whether sess runs under a role permissions.yml
// does not define.
func (c Children) roleUndefined(sess *session.Session) bool {
	return sess.Role != "" && !c.Rules().HasRole(sess.Role)
}

// promptAllowed reports whether sess may see and get a child's prompt.
func (c Children) promptAllowed(sess *session.Session, name string) bool {
	if c.roleUndefined(sess) {
		return false
	}
	return c.Rules().Level(sess.Role, name) != policy.Deny
}

// serverReachable reports whether sess may use a child's resources: it
// may call one of the server's tools, or the server has none.
func (c Children) serverReachable(sess *session.Session, server string) bool {
	if c.roleUndefined(sess) {
		return false
	}
	any := false
	rules := c.Rules()
	for _, e := range c.Catalog.Snapshot().Entries {
		if e.Source != catalog.SourceProxy || e.Server != server {
			continue
		}
		any = true
		if rules.Level(sess.Role, e.Name) != policy.Deny {
			return true
		}
	}
	return !any
}

// Prompts are the children's prompts sess may see, the names of native
// (the router's own) left out.
func (c Children) Prompts(sess *session.Session, native []*mcp.Prompt) []*mcp.Prompt {
	taken := map[string]bool{}
	for _, p := range native {
		taken[p.Name] = true
	}
	var out []*mcp.Prompt
	for _, p := range c.Proxy.Prompts() {
		if !taken[p.Prompt.Name] && c.promptAllowed(sess, p.Prompt.Name) {
			out = append(out, p.Prompt)
		}
	}
	return out
}

// Resources are the children's resources sess may see.
func (c Children) Resources(sess *session.Session) []*mcp.Resource {
	var out []*mcp.Resource
	reach := map[string]bool{}
	for _, r := range c.Proxy.Resources() {
		if !reservedURI(r.Resource.URI) && c.reachable(sess, reach, r.Server) {
			out = append(out, r.Resource)
		}
	}
	return out
}

// Templates are the children's resource templates sess may see.
func (c Children) Templates(sess *session.Session) []*mcp.ResourceTemplate {
	var out []*mcp.ResourceTemplate
	reach := map[string]bool{}
	for _, t := range c.Proxy.ResourceTemplates() {
		if !reservedURI(t.Template.URITemplate) && c.reachable(sess, reach, t.Server) {
			out = append(out, t.Template)
		}
	}
	return out
}

// reachable is serverReachable, remembered in memo for one listing.
func (c Children) reachable(sess *session.Session, memo map[string]bool, server string) bool {
	ok, seen := memo[server]
	if !seen {
		ok = c.serverReachable(sess, server)
		memo[server] = ok
	}
	return ok
}

// Prompt renders a child's prompt for sess (p names it as sess sees it,
// and carries a retry's answers to the child's input_required); ok is
// false when no child serves the name (or a native prompt has it).
func (c Children) Prompt(ctx context.Context, sess *session.Session, p *mcp.GetPromptParams) (*mcp.GetPromptResult, bool, error) {
	name := p.Name
	if c.native(name) {
		return nil, false, nil
	}
	server, original, ok := c.Proxy.PromptOwner(name)
	if !ok {
		return nil, false, nil
	}
	if !c.promptAllowed(sess, name) {
		return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: policy.DeniedText(name)}
	}
	own := *p
	own.Name = original
	res, err := c.Proxy.GetPrompt(ctx, server, sess, &own)
	return res, true, err
}

// resourceServer is the child a URI is read from; ok is false for the
// router's own URIs and URIs no child serves.
func (c Children) resourceServer(sess *session.Session, uri string) (string, bool, error) {
	if reservedURI(uri) {
		return "", false, nil
	}
	server, ok := c.Proxy.ResourceOwner(uri)
	if !ok {
		return "", false, nil
	}
	if !c.serverReachable(sess, server) {
		return "", true, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Resource " + uri + " is denied by the permission rules of server '" + server + "'"}
	}
	return server, true, nil
}

// Read reads a child's resource for sess (p carries a retry's answers to
// the child's input_required); ok is false for the router's own URIs and
// URIs no child serves.
func (c Children) Read(ctx context.Context, sess *session.Session, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, bool, error) {
	server, ok, err := c.resourceServer(sess, p.URI)
	if !ok || err != nil {
		return nil, ok, err
	}
	res, err := c.Proxy.ReadResource(ctx, server, sess, p)
	return res, true, err
}

// Subscribe forwards a subscription to the child serving the URI. A
// subscription to one of the router's own resources is accepted: they
// change only by list_changed, never by an update notification.
func (c Children) Subscribe(ctx context.Context, sess *session.Session, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	server, ok, err := c.resourceServer(sess, uri)
	if err != nil {
		return err
	}
	if !ok {
		if reservedURI(uri) {
			return nil
		}
		return mcp.ResourceNotFoundError(uri)
	}
	return c.Proxy.Subscribe(ctx, server, sess, uri)
}

// Unsubscribe ends a subscription Subscribe forwarded.
func (c Children) Unsubscribe(ctx context.Context, sess *session.Session, req *mcp.UnsubscribeRequest) error {
	return c.Proxy.Unsubscribe(ctx, sess, req.Params.URI)
}

// Complete answers completion/complete: a child's prompt or template is
// asked; the router's own prompts and templates offer no completions.
func (c Children) Complete(ctx context.Context, sess *session.Session, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	empty := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	p := req.Params
	if p == nil || p.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs a ref"}
	}
	fwd := *p
	ref := *p.Ref
	fwd.Ref = &ref
	var server string
	switch ref.Type {
	case "ref/prompt":
		if c.native(ref.Name) {
			return empty, nil
		}
		srv, original, ok := c.Proxy.PromptOwner(ref.Name)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown prompt: " + ref.Name}
		}
		if !c.promptAllowed(sess, ref.Name) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: policy.DeniedText(ref.Name)}
		}
		server, ref.Name = srv, original
	case "ref/resource":
		if reservedURI(ref.URI) {
			return empty, nil
		}
		srv, ok := c.Proxy.TemplateOwner(ref.URI)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown resource template: " + ref.URI}
		}
		if !c.serverReachable(sess, srv) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Resource " + ref.URI + " is denied by the permission rules of server '" + srv + "'"}
		}
		server = srv
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown completion reference type " + ref.Type}
	}
	res, err := c.Proxy.Complete(ctx, server, &fwd)
	if err != nil {
		return nil, router.WireError(err)
	}
	return res, nil
}

// native reports whether name is one of the router's own prompts.
func (c Children) native(name string) bool {
	if c.Own == nil {
		return false
	}
	for _, p := range c.Own() {
		if p.Name == name {
			return true
		}
	}
	return false
}
