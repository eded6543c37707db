// Package resources serves the MCP resources and prompts of the router:
// one skill:// resource per skill (subcategories included) and a template
// for them, the evokore:// status, config and category resources, and
// the resolve-workflow, skill-help and server-overview prompts.
//
// It reads the skill library, the children's status and the catalog
// through the functions it is given; it owns no state beyond caches of
// what it renders.
package resources

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/skills"
	"github.com/evokore/evokore/internal/status"
)

// URIs of the router's own resources.
const (
	StatusURI     = "evokore://server/status"
	ConfigURI     = "evokore://server/config"
	CategoriesURI = "evokore://skills/categories"
	// SkillTemplate matches every skill resource; name may hold
	// subcategories ("skill://cat/sub/name").
	SkillTemplate = "skill://{category}/{+name}"
)

// Prompt names.
const (
	PromptResolveWorkflow = "resolve-workflow"
	PromptSkillHelp       = "skill-help"
	PromptServerOverview  = "server-overview"
)

// promptBodyLimit is how much of each skill body the resolve-workflow
// prompt carries.
const promptBodyLimit = 2000

// Options are what the resources are built from.
type Options struct {
	Library *skills.Library
	// Status reports the child servers.
	Status func() []status.Server
	// Snapshot is the current tool catalog.
	Snapshot func() *catalog.Snapshot
	// Config returns the mcp.config.json in force (a reload replaces it);
	// nil, or a nil or empty result, when there is none.
	Config func() *config.MCPConfig
	// DiscoveryMode is dynamic or legacy.
	DiscoveryMode string
	// Name and Version are what initialize reports.
	Name    string
	Version string
	// Problems are what keeps the router from serving as configured (an
	// undefined role, a broken permissions.yml), for the status.
	Problems func() []string
	// Plugins serves the resources plugins add; nil when none.
	Plugins PluginResources
	// Semantic reports semantic reranking: "off", "on (...)" or
	// "lexical fallback: ...".
	Semantic func() string
}

// PluginResources are the resources of the loaded plugins, listed after
// the router's own and before the skills, as EVOKORE-MCP listed them.
type PluginResources interface {
	Resources() []*mcp.Resource
	// ReadResource reads a plugin resource; ok is false when no plugin
	// serves uri.
	ReadResource(ctx context.Context, uri string) (res *mcp.ReadResourceResult, ok bool, err error)
}

// Content implements the server's Content interface.
type Content struct {
	o Options

	mu        sync.Mutex
	cachedFor *skills.Index
	cached    []*mcp.Resource
}

// New builds the content over a library.
func New(o Options) *Content {
	if o.Name == "" {
		o.Name = "evokore"
	}
	return &Content{o: o}
}

// Changed is closed when the library is re-indexed.
func (c *Content) Changed() <-chan struct{} { return c.o.Library.Changed() }

// ownResources is how many resources the router itself serves.
const ownResources = 3

// Resources lists the three router resources, then the plugins', then one
// per skill in key order.
func (c *Content) Resources() []*mcp.Resource {
	all := c.ownAndSkills()
	if c.o.Plugins == nil {
		return all
	}
	plugged := c.o.Plugins.Resources()
	if len(plugged) == 0 {
		return all
	}
	out := make([]*mcp.Resource, 0, len(all)+len(plugged))
	out = append(out, all[:ownResources]...)
	out = append(out, plugged...)
	return append(out, all[ownResources:]...)
}

// ownAndSkills is the router's resources and the skills', cached per
// skill index.
func (c *Content) ownAndSkills() []*mcp.Resource {
	ix := c.o.Library.Index()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cachedFor == ix {
		return c.cached
	}
	out := []*mcp.Resource{
		{URI: StatusURI, Name: "Server Status", MIMEType: "application/json",
			Description: "Version, discovery mode, tool and skill counts, and the child servers' health."},
		{URI: ConfigURI, Name: "Server Config", MIMEType: "application/json",
			Description: "The child servers of mcp.config.json with every secret redacted."},
		{URI: CategoriesURI, Name: "Skill Categories", MIMEType: "application/json",
			Description: "The skill categories and how many skills each has."},
	}
	for _, s := range ix.Skills {
		if s.Remote != nil {
			continue // a child's skill is its own server's resource (the Skills Extension)
		}
		out = append(out, &mcp.Resource{URI: s.URI, Name: "Skill: " + s.Name, MIMEType: "text/markdown", Description: s.Description})
	}
	c.cachedFor, c.cached = ix, out
	return out
}

// ResourceTemplates offers the skill:// template.
func (c *Content) ResourceTemplates() []*mcp.ResourceTemplate {
	return []*mcp.ResourceTemplate{{
		URITemplate: SkillTemplate,
		Name:        "Skill",
		MIMEType:    "text/markdown",
		Description: "A skill's markdown by category and name; skills in subcategories are skill://<category>/<sub>/<name>.",
	}}
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// notFound is the error for a URI nothing serves: -32602 with the URI in
// its data, as MCP asks of a resource-not-found error (SEP-2164), so a
// client can tell which of its reads failed.
func notFound(uri, message string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: message + ": " + uri, Data: data}
}

// ReadResource reads a router resource, a skill or a plugin's resource.
func (c *Content) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	if c.o.Plugins != nil && !strings.HasPrefix(uri, "evokore://") && !strings.HasPrefix(uri, skills.URIScheme) {
		if r, ok, err := c.o.Plugins.ReadResource(ctx, uri); ok {
			return r, err
		}
	}
	switch {
	case strings.HasPrefix(uri, "evokore://"):
		var v any
		switch uri {
		case StatusURI:
			v = c.status()
		case ConfigURI:
			v = c.sanitizedConfig()
		case CategoriesURI:
			ix := c.o.Library.Index()
			v = struct {
				TotalSkills int                    `json:"totalSkills"`
				Categories  []skills.CategoryCount `json:"categories"`
			}{ix.Len(), ix.Categories()}
		default:
			return nil, notFound(uri, "Unknown evokore resource")
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
	case strings.HasPrefix(uri, skills.URIScheme):
		s := c.o.Library.Index().ByURI(uri)
		if s == nil {
			return nil, notFound(uri, "Skill not found")
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: s.URI, MIMEType: "text/markdown", Text: s.Body}}}, nil
	}
	return nil, notFound(uri, "Unknown resource")
}

// ChildStatus is one child server in the status resource.
type ChildStatus struct {
	ID                  string `json:"id"`
	Status              string `json:"status"`
	ConnectionType      string `json:"connectionType"`
	RegisteredToolCount int    `json:"registeredToolCount"`
	ErrorCount          int    `json:"errorCount"`
}

// Status is evokore://server/status.
type Status struct {
	Version       string        `json:"version"`
	DiscoveryMode string        `json:"discoveryMode"`
	ToolCount     int           `json:"toolCount"`
	SkillCount    int           `json:"skillCount"`
	ChildServers  []ChildStatus `json:"childServers"`
	Problems      []string      `json:"problems,omitempty"`
	// SemanticSearch says whether discovery reranks with embeddings, and
	// why it fell back to lexical ranking when it did.
	SemanticSearch string `json:"semanticSearch"`
}

func (c *Content) status() Status {
	st := Status{Version: c.o.Version, DiscoveryMode: c.o.DiscoveryMode, SkillCount: c.o.Library.Index().Len(), ChildServers: []ChildStatus{}, SemanticSearch: "off"}
	if c.o.Semantic != nil {
		st.SemanticSearch = c.o.Semantic()
	}
	if c.o.Snapshot != nil {
		if snap := c.o.Snapshot(); snap != nil {
			st.ToolCount = len(snap.Entries)
		}
	}
	if c.o.Problems != nil {
		st.Problems = c.o.Problems()
	}
	if c.o.Status != nil {
		for _, s := range c.o.Status() {
			st.ChildServers = append(st.ChildServers, ChildStatus{ID: s.ID, Status: s.Status, ConnectionType: s.ConnectionType,
				RegisteredToolCount: s.RegisteredToolCount, ErrorCount: s.ErrorCount})
		}
	}
	return st
}
