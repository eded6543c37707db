package server

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/native/routing"
	"github.com/evokore/evokore/internal/session"
)

// Every native handler answers arguments it cannot decode with the same
// isError result the Validate stage gives a schema violation, never a
// JSON-RPC error (docs/decisions.md, "Invalid tool arguments"). The
// handlers are called directly, past the stage, as a schema too loose for
// the handler's types would let such arguments through.
func TestEveryNativeAnswersUndecodableArgumentsAsAToolError(t *testing.T) {
	dir := t.TempDir()
	settings, _ := config.ReadSettings(config.NewEnv(map[string]string{
		"HOME": dir, "EVOKORE_HOME": dir + "/home", "EVOKORE_MCP_CONFIG_PATH": dir + "/mcp.config.json",
		"EVOKORE_PERMISSIONS_PATH": dir + "/permissions.yml", "EVOKORE_SKILLS_DIR": dir + "/SKILLS",
	}), ShippedDefaults)
	s := New(Options{Settings: settings, Version: "test"})
	t.Cleanup(func() { _ = s.Close() })
	// The table New builds, built again here to reach the handlers.
	table := &native.Table{}
	routing.Register(table, s, s)
	routing.RegisterDiscovery(table, s, nil)
	host := &native.Host{Config: s.Config, Catalog: s.catalog, Sessions: s.Sessions, Log: s.log, Call: s.callTool}
	contrib := registerManagers(table, host, s)
	t.Cleanup(func() {
		for i := len(contrib.Closers) - 1; i >= 0; i-- {
			contrib.Closers[i]()
		}
	})

	for _, spec := range native.Specs() {
		h, ok := table.Handler(spec.Name)
		if !ok {
			t.Errorf("%s: no handler bound", spec.Name)
			continue
		}
		var schema struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal([]byte(spec.InputSchema), &schema); err != nil {
			t.Fatal(err)
		}
		if len(schema.Properties) == 0 {
			continue // takes no arguments, so there is nothing to decode
		}
		for _, args := range []string{`[]`, `"text"`, `42`, `{"` + slices.Sorted(maps.Keys(schema.Properties))[0] + `":`} {
			t.Run(spec.Name+" "+args, func(t *testing.T) {
				res, err := h(context.Background(), &native.Call{Spec: spec, Args: json.RawMessage(args), Session: session.New("s", "")})
				if err != nil {
					t.Fatalf("answered a JSON-RPC error: %v", err)
				}
				text := ""
				if res != nil && len(res.Content) == 1 {
					if tc, ok := res.Content[0].(*mcp.TextContent); ok {
						text = tc.Text
					}
				}
				if res == nil || !res.IsError || !strings.HasPrefix(text, "Invalid arguments for '"+spec.Name+"':\n- ") {
					t.Fatalf("answered %+v %q, want the invalid-arguments result", res, text)
				}
			})
		}
	}
}
