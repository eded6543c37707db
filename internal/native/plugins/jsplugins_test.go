package plugins_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// installJS copies the JavaScript fixtures into a plugins directory, top
// level, as the original expects them.
func installJS(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "plugins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"greeting.js", "no-register.js"} {
		b, err := os.ReadFile(filepath.Join("testdata", "js", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTheOriginalsJavaScriptPluginLoadsAndAnswers(t *testing.T) {
	testutil.Require(t, "node")
	dir := installJS(t)
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_PLUGINS_DIR": dir, "EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	cs := h.Connect(nil)
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var hello *mcp.Tool
	for _, tl := range tools.Tools {
		if tl.Name == "hello_world" {
			hello = tl
		}
	}
	if hello == nil || hello.Description != "Greets someone by name." {
		t.Fatalf("hello_world is not listed as the plugin declared it: %+v", hello)
	}
	if text, isErr := routertest.CallText(t, cs, "hello_world", map[string]any{"name": "Ada"}); isErr || text != "Hello, Ada! (from the example-hello plugin)" {
		t.Errorf("hello_world = %v %q", isErr, text)
	}
	if text, isErr := routertest.CallText(t, cs, "hello_world", map[string]any{}); isErr || text != "Hello, World! (from the example-hello plugin)" {
		t.Errorf("hello_world without a name = %v %q", isErr, text)
	}
	if text, isErr := routertest.CallText(t, cs, "plugin_fails", map[string]any{}); !isErr || text != "the handler gave up" {
		t.Errorf("a throwing handler = %v %q", isErr, text)
	}

	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	if i := slices.Index(uris, "plugin://example-hello/motd"); i != 3 {
		t.Errorf("the plugin's resource is at %d of %v; want right after the router's three", i, uris)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "plugin://example-hello/motd"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "Plugins run under node." || read.Contents[0].MIMEType != "text/plain" {
		t.Errorf("reading the plugin resource = %+v %v", read, err)
	}

	// The summary counts it, and names the file that is not a plugin.
	text, _ := routertest.CallText(t, cs, "reload_plugins", map[string]any{})
	for _, want := range []string{"1 loaded", "- example-hello 1.0.0: hello_world, plugin_fails",
		filepath.Join(dir, "no-register.js") + ": Plugin must export a register(context) function (plugin skipped)"} {
		if !strings.Contains(text, want) {
			t.Errorf("reload_plugins lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(h.Stderr.String(), "[EVOKORE][plugin:example-hello] adding hello_world") {
		t.Errorf("the plugin's log line is not on stderr:\n%s", h.Stderr.String())
	}
}

func TestJavaScriptPluginsWithoutNodeAreNamedAndSkipped(t *testing.T) {
	dir := installJS(t)
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_PLUGINS_DIR": dir, "PATH": t.TempDir()})
	cs := h.Connect(nil)
	for _, f := range []string{"greeting.js", "no-register.js"} {
		want := "Plugin problem: " + filepath.Join(dir, f) + ": skipped: node is not on PATH"
		if !strings.Contains(h.Stderr.String(), want) {
			t.Errorf("stderr does not name %s:\n%s", f, h.Stderr.String())
		}
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hello_world", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "Unknown tool: hello_world") {
		t.Errorf("hello_world without node = %v; want it unknown", err)
	}
}

// A JavaScript plugin that exits, prints on the real stdout or never
// finishes registering while it loads is skipped on its own: they all
// used to load in one host process, and one such file spoilt the report
// of every other, so none loaded.
func TestAJavaScriptPluginThatBreaksItsLoadCostsOnlyItself(t *testing.T) {
	testutil.Require(t, "node")
	dir := installJS(t)
	bad := map[string]string{
		"exits.js":   "process.exit(0);\n",
		"prints.js":  "require('fs').writeSync(1, 'not json\\n');\nmodule.exports = {name: 'prints', register() {}};\n",
		"pending.js": "module.exports = {name: 'pending', register() { return new Promise(() => {}); }};\n",
	}
	for f, src := range bad {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_PLUGINS_DIR": dir})
	cs := h.Connect(nil)
	text, _ := routertest.CallText(t, cs, "reload_plugins", map[string]any{})
	if !strings.Contains(text, "- example-hello 1.0.0: hello_world, plugin_fails") {
		t.Errorf("the good plugin did not load beside the broken ones:\n%s", text)
	}
	for f := range bad {
		if !strings.Contains(text, filepath.Join(dir, f)+": the JavaScript plugin host failed: ") {
			t.Errorf("reload_plugins does not name %s as failed:\n%s", f, text)
		}
	}
	if text, isErr := routertest.CallText(t, cs, "hello_world", map[string]any{"name": "Ada"}); isErr || text != "Hello, Ada! (from the example-hello plugin)" {
		t.Errorf("hello_world = %v %q", isErr, text)
	}
}
