package server

import (
	"context"

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
func (v *view) contentMethod(ctx context.Context, method string, req mcp.Request) (res mcp.Result, ok bool, err error) {
	c := v.srv.content
	switch method {
	case "resources/list":
		var list []*mcp.Resource
		if c != nil {
			list = c.Resources()
		}
		if list == nil {
			list = []*mcp.Resource{}
		}
		return &mcp.ListResourcesResult{Resources: list}, true, nil
	case "resources/templates/list":
		var list []*mcp.ResourceTemplate
		if c != nil {
			list = c.ResourceTemplates()
		}
		if list == nil {
			list = []*mcp.ResourceTemplate{}
		}
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: list}, true, nil
	case "resources/read":
		if c == nil {
			return nil, true, mcp.ResourceNotFoundError(req.(*mcp.ReadResourceRequest).Params.URI)
		}
		r, err := c.ReadResource(ctx, req.(*mcp.ReadResourceRequest).Params.URI)
		if err != nil {
			return nil, true, router.WireError(err)
		}
		return r, true, nil
	case "prompts/list":
		var list []*mcp.Prompt
		if c != nil {
			list = c.Prompts()
		}
		if list == nil {
			list = []*mcp.Prompt{}
		}
		return &mcp.ListPromptsResult{Prompts: list}, true, nil
	case "prompts/get":
		p := req.(*mcp.GetPromptRequest).Params
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

// syncResources mirrors the resource URIs into the SDK registry so that a
// change reaches this session as notifications/resources/list_changed.
func (v *view) syncResources() {
	c := v.srv.content
	if c == nil {
		return
	}
	now := map[string]*mcp.Resource{}
	for _, r := range c.Resources() {
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
