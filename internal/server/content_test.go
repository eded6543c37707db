package server_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// Re-reading the skills tells clients to list tools and resources again,
// even when only a skill's text changed.
func TestRefreshSkillsAnnouncesListChanges(t *testing.T) {
	dir := t.TempDir()
	skill := "---\nname: probe-skill\ndescription: First text.\n---\n# Probe\n"
	testutil.WriteFile(t, dir, "SKILLS/testing/probe-skill/SKILL.md", skill)
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_SKILLS_DIR": dir + "/SKILLS"})
	var tools, resources atomic.Int32
	cs := h.Connect(&mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { tools.Add(1) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources.Add(1) },
	})
	// The first index announces the skill resources once; only after it
	// can a later announcement be told apart from the start's.
	routertest.WaitFor(t, "the first resources/list_changed", func() bool { return resources.Load() > 0 })
	tools.Store(0)
	resources.Store(0)

	testutil.WriteFile(t, dir, "SKILLS/testing/probe-skill/SKILL.md", "---\nname: probe-skill\ndescription: Second text.\n---\n# Probe\n")
	if res := routertest.Call(t, cs, "refresh_skills", map[string]any{}); res.IsError {
		t.Fatalf("refresh_skills: %s", routertest.Text(res))
	}
	routertest.WaitFor(t, "tools/list_changed", func() bool { return tools.Load() > 0 })
	routertest.WaitFor(t, "resources/list_changed", func() bool { return resources.Load() > 0 })
}
