package server

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

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
func (s *Server) roleUndefined(sess *session.Session) bool {
	return sess.Role != "" && !s.policy.Rules().RBAC.HasRole(sess.Role)
}

// promptAllowed reports whether sess may see and get a child's prompt.
func (s *Server) promptAllowed(sess *session.Session, name string) bool {
	if s.roleUndefined(sess) {
		return false
	}
	return s.policy.Rules().RBAC.Level(sess.Role, name) != policy.Deny
}

// serverReachable reports whether sess may use a child's resources: it
// may call one of the server's tools, or the server has none.
func (s *Server) serverReachable(sess *session.Session, server string) bool {
	if s.roleUndefined(sess) {
		return false
	}
	any := false
	for _, e := range s.catalog.Snapshot().Entries {
		if e.Source != catalog.SourceProxy || e.Server != server {
			continue
		}
		any = true
		if s.policy.Rules().RBAC.Level(sess.Role, e.Name) != policy.Deny {
			return true
		}
	}
	return !any
}

// childPrompts are the children's prompts sess may see, natives' names
// left out.
func (v *view) childPrompts(native []*mcp.Prompt) []*mcp.Prompt {
	taken := map[string]bool{}
	for _, p := range native {
		taken[p.Name] = true
	}
	var out []*mcp.Prompt
	for _, p := range v.srv.proxy.Prompts() {
		if !taken[p.Prompt.Name] && v.srv.promptAllowed(v.sess, p.Prompt.Name) {
			out = append(out, p.Prompt)
		}
	}
	return out
}

func (v *view) childResources() []*mcp.Resource {
	var out []*mcp.Resource
	reach := map[string]bool{}
	for _, r := range v.srv.proxy.Resources() {
		if !reservedURI(r.Resource.URI) && v.reachable(reach, r.Server) {
			out = append(out, r.Resource)
		}
	}
	return out
}

func (v *view) childTemplates() []*mcp.ResourceTemplate {
	var out []*mcp.ResourceTemplate
	reach := map[string]bool{}
	for _, t := range v.srv.proxy.ResourceTemplates() {
		if !reservedURI(t.Template.URITemplate) && v.reachable(reach, t.Server) {
			out = append(out, t.Template)
		}
	}
	return out
}

// reachable is serverReachable, remembered in memo for one listing.
func (v *view) reachable(memo map[string]bool, server string) bool {
	ok, seen := memo[server]
	if !seen {
		ok = v.srv.serverReachable(v.sess, server)
		memo[server] = ok
	}
	return ok
}

// childPrompt renders a child's prompt; ok is false when no child serves
// name (or a native prompt has it).
func (v *view) childPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, bool, error) {
	if c := v.srv.content; c != nil {
		for _, p := range c.Prompts() {
			if p.Name == name {
				return nil, false, nil
			}
		}
	}
	server, original, ok := v.srv.proxy.PromptOwner(name)
	if !ok {
		return nil, false, nil
	}
	if !v.srv.promptAllowed(v.sess, name) {
		return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: policy.DeniedText(name)}
	}
	res, err := v.srv.proxy.GetPrompt(ctx, server, original, args)
	return res, true, err
}

// resourceServer is the child a URI is read from; ok is false for the
// router's own URIs and URIs no child serves.
func (v *view) resourceServer(uri string) (string, bool, error) {
	if reservedURI(uri) {
		return "", false, nil
	}
	server, ok := v.srv.proxy.ResourceOwner(uri)
	if !ok {
		return "", false, nil
	}
	if !v.srv.serverReachable(v.sess, server) {
		return "", true, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Resource " + uri + " is denied by the permission rules of server '" + server + "'"}
	}
	return server, true, nil
}

func (v *view) childRead(ctx context.Context, uri string) (*mcp.ReadResourceResult, bool, error) {
	server, ok, err := v.resourceServer(uri)
	if !ok || err != nil {
		return nil, ok, err
	}
	res, err := v.srv.proxy.ReadResource(ctx, server, uri)
	return res, true, err
}

// subscribe forwards a subscription to the child serving the URI. A
// subscription to one of the router's own resources is accepted: they
// change only by list_changed, never by an update notification.
func (v *view) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	server, ok, err := v.resourceServer(uri)
	if err != nil {
		return err
	}
	if !ok {
		if reservedURI(uri) {
			return nil
		}
		return mcp.ResourceNotFoundError(uri)
	}
	return v.srv.proxy.Subscribe(ctx, server, v.sess, uri)
}

func (v *view) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	return v.srv.proxy.Unsubscribe(ctx, v.sess, req.Params.URI)
}

// complete answers completion/complete: a child's prompt or template is
// asked; the router's own prompts and templates offer no completions.
func (v *view) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
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
		if c := v.srv.content; c != nil {
			for _, np := range c.Prompts() {
				if np.Name == ref.Name {
					return empty, nil
				}
			}
		}
		srv, original, ok := v.srv.proxy.PromptOwner(ref.Name)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown prompt: " + ref.Name}
		}
		if !v.srv.promptAllowed(v.sess, ref.Name) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: policy.DeniedText(ref.Name)}
		}
		server, ref.Name = srv, original
	case "ref/resource":
		if reservedURI(ref.URI) {
			return empty, nil
		}
		srv, ok := v.srv.proxy.TemplateOwner(ref.URI)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown resource template: " + ref.URI}
		}
		if !v.srv.serverReachable(v.sess, srv) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Resource " + ref.URI + " is denied by the permission rules of server '" + srv + "'"}
		}
		server = srv
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown completion reference type " + ref.Type}
	}
	res, err := v.srv.proxy.Complete(ctx, server, &fwd)
	if err != nil {
		return nil, router.WireError(err)
	}
	return res, nil
}

// resourceUpdated passes a child's resource update to every session; the
// SDK sends it only to the sessions subscribed to that URI.
func (s *Server) resourceUpdated(ctx context.Context, params *mcp.ResourceUpdatedNotificationParams) {
	s.mu.Lock()
	views := append([]*view(nil), s.views...)
	s.mu.Unlock()
	for _, v := range views {
		_ = v.mcp.ResourceUpdated(ctx, params)
	}
}
