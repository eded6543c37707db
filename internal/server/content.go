package server

import (
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/router"
)

// Content supplies the resources and prompts every session serves: the
// skills library and the router's own status resources.
type Content interface {
	Resources() []*mcp.Resource
	ResourceTemplates() []*mcp.ResourceTemplate
	// ReadResource returns a listed resource or one a template matches; an
	// unknown URI is a *jsonrpc.Error with code -32602.
	ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)
	Prompts() []*mcp.Prompt
	// GetPrompt renders a prompt; an unknown name is -32601.
	GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error)
	// Changed is closed the next time the resources or prompts change.
	Changed() <-chan struct{}
}

// contentMethod answers resources/* and prompts/* from Content; ok is
// false for any other method.
// roleScoped is the caching hint of what the router lists and reads:
// what a caller sees depends on its role, so only its own client may
// keep it, and it may change at any time (a reload, a child's update).
var roleScoped = mcp.Cacheable{CacheScope: "private"}

func (v *View) contentMethod(ctx context.Context, method string, req mcp.Request) (res mcp.Result, ok bool, err error) {
	c := v.srv.content
	switch method {
	case "resources/list":
		return &mcp.ListResourcesResult{Resources: v.resources(), Cacheable: roleScoped}, true, nil
	case "resources/templates/list":
		var list []*mcp.ResourceTemplate
		if c != nil {
			list = c.ResourceTemplates()
		}
		list = append(slices.Clip(list), v.srv.children.Templates(v.sess)...)
		if list == nil {
			list = []*mcp.ResourceTemplate{}
		}
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: list, Cacheable: roleScoped}, true, nil
	case "resources/read":
		if r, ok, err := v.readSkillFile(ctx, req.(*mcp.ReadResourceRequest).Params); ok {
			if err != nil {
				return nil, true, err
			}
			r.Cacheable = roleScoped
			return r, true, nil
		}
		if r, ok, err := v.srv.children.Read(ctx, v.sess, req.(*mcp.ReadResourceRequest).Params); ok {
			if err != nil {
				return nil, true, router.WireError(err)
			}
			r.Cacheable = roleScoped
			return r, true, nil
		}
		if c == nil {
			return nil, true, mcp.ResourceNotFoundError(req.(*mcp.ReadResourceRequest).Params.URI)
		}
		r, err := c.ReadResource(ctx, req.(*mcp.ReadResourceRequest).Params.URI)
		if err != nil {
			return nil, true, router.WireError(err)
		}
		r.Cacheable = roleScoped
		return r, true, nil
	case "prompts/list":
		var list []*mcp.Prompt
		if c != nil {
			list = c.Prompts()
		}
		list = append(slices.Clip(list), v.srv.children.Prompts(v.sess, list)...)
		if list == nil {
			list = []*mcp.Prompt{}
		}
		return &mcp.ListPromptsResult{Prompts: list, Cacheable: roleScoped}, true, nil
	case "prompts/get":
		p := req.(*mcp.GetPromptRequest).Params
		if r, ok, err := v.srv.children.Prompt(ctx, v.sess, p); ok {
			if err != nil {
				return nil, true, router.WireError(err)
			}
			return r, true, nil
		}
		if c == nil {
			return nil, true, router.MethodNotFound("Unknown prompt: " + p.Name)
		}
		r, err := c.GetPrompt(ctx, p.Name, p.Arguments)
		if err != nil {
			return nil, true, router.WireError(err)
		}
		return r, true, nil
	}
	return nil, false, nil
}

// resources are what resources/list shows the session: the router's own
// (less the skills it is not served), the SKILL.md of every skill the
// Skills Extension serves it, then the children's.
func (v *View) resources() []*mcp.Resource {
	var list []*mcp.Resource
	if c := v.srv.content; c != nil {
		list = v.srv.visibleContent(v.sess, c.Resources())
	}
	list = append(list, v.srv.skillResources(v.sess)...)
	list = append(list, v.srv.children.Resources(v.sess)...)
	if list == nil {
		list = []*mcp.Resource{}
	}
	return list
}

// syncResources mirrors the resource URIs into the SDK registry so that a
// change reaches this session as notifications/resources/list_changed.
func (v *View) syncResources() {
	now := map[string]*mcp.Resource{}
	for _, r := range v.resources() {
		now[r.URI] = r
	}
	if v.resourcesStale {
		v.resourcesStale = false
		var all []string
		for uri := range v.mirroredRes {
			all = append(all, uri)
		}
		v.mcp.RemoveResources(all...)
		clear(v.mirroredRes)
	}
	var gone []string
	for uri := range v.mirroredRes {
		if now[uri] == nil {
			gone = append(gone, uri)
			delete(v.mirroredRes, uri)
		}
	}
	if len(gone) > 0 {
		v.mcp.RemoveResources(gone...)
	}
	for uri, r := range now {
		if !v.mirroredRes[uri] {
			v.mirroredRes[uri] = true
			v.mcp.AddResource(&mcp.Resource{URI: r.URI, Name: r.Name}, nil)
		}
	}
}

// syncPrompts mirrors the children's prompt names this session sees into
// the SDK registry, so that a change reaches this session as
// notifications/prompts/list_changed. The router's own prompts never
// change.
func (v *View) syncPrompts() {
	now := map[string]bool{}
	var native []*mcp.Prompt
	if c := v.srv.content; c != nil {
		native = c.Prompts()
	}
	for _, p := range v.srv.children.Prompts(v.sess, native) {
		now[p.Name] = true
	}
	var gone []string
	for name := range v.mirroredPrompts {
		if !now[name] {
			gone = append(gone, name)
			delete(v.mirroredPrompts, name)
		}
	}
	if len(gone) > 0 {
		v.mcp.RemovePrompts(gone...)
	}
	for name := range now {
		if !v.mirroredPrompts[name] {
			v.mirroredPrompts[name] = true
			v.mcp.AddPrompt(&mcp.Prompt{Name: name}, nil)
		}
	}
}
