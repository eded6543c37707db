package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/router"
)

// Options assemble a Policy.
type Options struct {
	Permissions *config.Permissions
	// Servers give the rate limits and cooldowns of proxied tools.
	Servers []config.Server
	// DefaultDeny is EVOKORE_SECURITY_DEFAULT_DENY.
	DefaultDeny bool
	// Home holds pending-approvals.json and denied-approvals.json.
	Home string
	// ApprovalTTL is how long a token lives; Cooldown is the default
	// cooldown of a failing call.
	ApprovalTTL time.Duration
	Cooldown    time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Policy is every per-call decision, installed into the router as its
// stages: permission, approval, rate limit, cooldown.
type Policy struct {
	RBAC      *RBAC
	Approvals *Approvals
	Limits    *Limits
	Cooldowns *Cooldowns
	cooldown  map[string]time.Duration
	fallback  time.Duration
}

// New assembles the policy.
func New(o Options) *Policy {
	p := &Policy{
		RBAC:      NewRBAC(o.Permissions, o.DefaultDeny),
		Approvals: NewApprovals(o.Home, o.ApprovalTTL, o.Now),
		Limits:    NewLimits(o.Servers, o.Now),
		Cooldowns: NewCooldowns(o.Now),
		cooldown:  map[string]time.Duration{},
		fallback:  o.Cooldown,
	}
	for _, s := range o.Servers {
		if s.CooldownMs != nil {
			p.cooldown[s.ID] = time.Duration(*s.CooldownMs) * time.Millisecond
		}
	}
	return p
}

// Stages are the policy's pipeline stages by name. The composition root
// puts them in order around the router's own (quarantine, validation).
type Stages struct {
	Permission router.Stage
	Approval   router.Stage
	RateLimit  router.Stage
	Cooldown   router.Stage
}

// Stages returns the policy's stages.
func (p *Policy) Stages() Stages {
	return Stages{
		Permission: permissionStage{p},
		Approval:   approvalStage{p},
		RateLimit:  rateLimitStage{p},
		Cooldown:   cooldownStage{p},
	}
}

// Observers return what the policy must see of every dispatched call: the
// cooldown starts after a failure.
func (p *Policy) Observers() []router.Observer {
	return []router.Observer{cooldownStage{p}}
}

// DeniedText is the refusal of a denied tool, as EVOKORE-MCP words it.
func DeniedText(tool string) string {
	return "Execution of '" + tool + "' is strictly denied by EVOKORE-MCP security policies."
}

type permissionStage struct{ p *Policy }

func (s permissionStage) Check(_ context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	switch s.p.RBAC.Level(c.Session.Role, c.Entry.Name) {
	case Deny:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: DeniedText(c.Entry.Name)}
	case RequireApproval:
		c.NeedsApproval = true
	}
	return nil, nil
}

type approvalStage struct{ p *Policy }

// Check strips the token from every call (no child or handler ever sees
// it) and, for tools that need approval, either accepts a valid token,
// consuming it just before dispatch, or intercepts with a fresh one.
func (s approvalStage) Check(_ context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	token, args := takeToken(c.Args)
	c.Args = args
	if !c.NeedsApproval {
		return nil, nil
	}
	a := s.p.Approvals
	if token != "" {
		if id, ok := a.Validate(c.Session.ID, c.Entry, args, token); ok {
			c.BeforeDispatch(func() (*mcp.CallToolResult, error) {
				if a.Consume(id) {
					return nil, nil
				}
				return a.Intercept(c.Session.ID, c.Entry, args), nil
			})
			return nil, nil
		}
	}
	return a.Intercept(c.Session.ID, c.Entry, args), nil
}

// takeToken removes the approval token from the arguments.
func takeToken(args json.RawMessage) (string, json.RawMessage) {
	if !bytes.Contains(args, []byte(TokenField)) {
		return "", args
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return "", args
	}
	raw, ok := m[TokenField]
	if !ok {
		return "", args
	}
	delete(m, TokenField)
	var token string
	_ = json.Unmarshal(raw, &token)
	out, err := json.Marshal(m)
	if err != nil {
		return token, args
	}
	return token, out
}

type rateLimitStage struct{ p *Policy }

func (s rateLimitStage) Check(_ context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	if c.Entry.Source != catalog.SourceProxy {
		return nil, nil
	}
	return nil, s.p.Limits.Take(c.Entry.Server, c.Entry.Original)
}

type cooldownStage struct{ p *Policy }

func (s cooldownStage) duration(server string) time.Duration {
	if d, ok := s.p.cooldown[server]; ok {
		return d
	}
	return s.p.fallback
}

func (s cooldownStage) Check(_ context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	if c.Entry.Source != catalog.SourceProxy || s.duration(c.Entry.Server) <= 0 {
		return nil, nil
	}
	return s.p.Cooldowns.Check(c.Entry.Name, c.Args), nil
}

// Observe starts a cooldown after a proxied call fails.
func (s cooldownStage) Observe(ctx context.Context, c *router.Call, res *mcp.CallToolResult, err error) {
	if c.Entry.Source != catalog.SourceProxy || ctx.Err() != nil {
		return // a call the client cancelled did not fail
	}
	if err != nil || (res != nil && res.IsError) {
		s.p.Cooldowns.Fail(c.Entry.Name, c.Args, s.duration(c.Entry.Server))
	}
}
