package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/skills"
)

// Prompts lists the three prompts in EVOKORE-MCP's order.
func (c *Content) Prompts() []*mcp.Prompt {
	return []*mcp.Prompt{
		{Name: PromptResolveWorkflow, Title: "Resolve Workflow",
			Description: "Find the skills that fit an objective and show their instructions.",
			Arguments:   []*mcp.PromptArgument{{Name: "objective", Description: "What you are trying to do.", Required: true}}},
		{Name: PromptSkillHelp, Title: "Skill Help",
			Description: "One skill's overview and instructions.",
			Arguments:   []*mcp.PromptArgument{{Name: "skill_name", Description: "The skill's name or category/name key.", Required: true}}},
		{Name: PromptServerOverview, Title: "Server Overview",
			Description: "The router's tools, child servers and skill categories at a glance."},
	}
}

// GetPrompt renders a prompt.
func (c *Content) GetPrompt(_ context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	ix := c.o.Library.Index()
	msg := func(role mcp.Role, text string) *mcp.PromptMessage {
		return &mcp.PromptMessage{Role: role, Content: &mcp.TextContent{Text: text}}
	}
	switch name {
	case PromptResolveWorkflow:
		objective := strings.TrimSpace(args["objective"])
		if objective == "" {
			return nil, invalidParams("The 'objective' argument is required for the resolve-workflow prompt.")
		}
		matches := ix.Search(objective, 3)
		text := ix.WorkflowText(objective, matches, skills.WorkflowOptions{MaxBody: promptBodyLimit})
		return &mcp.GetPromptResult{
			Description: "Workflows for: " + objective,
			Messages:    []*mcp.PromptMessage{msg("user", "Find workflows for: "+objective), msg("assistant", text)},
		}, nil
	case PromptSkillHelp:
		skill := strings.TrimSpace(args["skill_name"])
		if skill == "" {
			return nil, invalidParams("The 'skill_name' argument is required for the skill-help prompt.")
		}
		s, note := ix.Resolve(skill), ""
		if s == nil {
			if s = ix.Lookup(skill); s != nil {
				note = fmt.Sprintf("No skill is named '%s'; this is the closest match.\n", skill)
			}
		}
		if s == nil {
			return nil, invalidParams("Skill not found: %s", skill)
		}
		return &mcp.GetPromptResult{
			Description: "Help for skill " + s.Name,
			Messages:    []*mcp.PromptMessage{msg("user", "Help for skill: "+skill), msg("assistant", note+ix.HelpPlain(s))},
		}, nil
	case PromptServerOverview:
		return &mcp.GetPromptResult{
			Description: "Server overview",
			Messages:    []*mcp.PromptMessage{msg("assistant", c.overview(ix))},
		}, nil
	}
	return nil, router.MethodNotFound("Unknown prompt: " + name)
}

func (c *Content) overview(ix *skills.Index) string {
	st := c.status()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", c.o.Name, c.o.Version)
	fmt.Fprintf(&b, "Discovery mode: %s\n", st.DiscoveryMode)
	fmt.Fprintf(&b, "Total tools: %d\n", st.ToolCount)
	fmt.Fprintf(&b, "Total skills: %d\n", st.SkillCount)
	fmt.Fprintf(&b, "Child servers (%d):\n", len(st.ChildServers))
	if len(st.ChildServers) == 0 {
		b.WriteString("  (none connected)\n")
	}
	for _, s := range st.ChildServers {
		fmt.Fprintf(&b, "  - %s: %s (%s, %d tools)\n", s.ID, s.Status, s.ConnectionType, s.RegisteredToolCount)
	}
	b.WriteString("Skill categories:\n")
	for _, cat := range ix.Categories() {
		fmt.Fprintf(&b, "  - %s: %d skills\n", cat.Name, cat.Count)
	}
	return strings.TrimRight(b.String(), "\n")
}
