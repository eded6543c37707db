package plugins_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/native/plugins"
	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// install copies plugin folders (from examples/ or testdata/) into dir.
func install(t *testing.T, dir string, folders ...string) {
	t.Helper()
	for _, src := range folders {
		dst := filepath.Join(dir, filepath.Base(src))
		err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

var took = regexp.MustCompile(` in \d+ms:`)

func TestReloadPublishesTheExamplePlugin(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plugins")
	install(t, dir, "examples/hello", "testdata/broken", "testdata/later")
	if err := os.MkdirAll(filepath.Join(dir, "not-a-plugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_PLUGINS_DIR": dir})
	changed := make(chan struct{}, 16)
	cs := h.Connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})

	// Problems are logged at start, with their positions.
	if !strings.Contains(h.Stderr.String(), "[EVOKORE] Plugin problem: "+filepath.Join(dir, "broken", "plugin.json")+":5:14: ") {
		t.Errorf("stderr = %s", h.Stderr.String())
	}

	text, isErr := routertest.CallText(t, cs, "reload_plugins", map[string]any{})
	want := "Plugins reloaded from " + dir + " in 0ms: 2 loaded, 3 problem(s), 2 tool(s).\n" +
		"Loaded:\n" +
		"- hello 1.0.0: hello_world\n" +
		"- clash 2.0.0: clash_ok\n" +
		"Problems:\n" +
		"- " + filepath.Join(dir, "broken", "plugin.json") + `:5:14: error: tools.0.name: invalid value "has space" (out of bound =~"^[A-Za-z0-9_-]{1,64}$") [schema] (plugin skipped)` + "\n" +
		"- " + filepath.Join(dir, "later", "plugin.json") + `: tool "claim_list" has the name of a native tool (tool skipped)` + "\n" +
		"- " + filepath.Join(dir, "later", "plugin.json") + `: tool "hello_world" is already served by plugin "hello" (tool skipped)`
	if got := took.ReplaceAllString(text, " in 0ms:"); isErr || got != want {
		t.Errorf("reload =\n%s\nwant\n%s", got, want)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no tools/list_changed after the reload")
	}
}

func TestHelloPlugin(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plugins")
	install(t, dir, "examples/hello")
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_PLUGINS_DIR": dir, "EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	cs := h.Connect(nil)
	if text, _ := routertest.CallText(t, cs, "reload_plugins", map[string]any{}); !strings.Contains(text, "1 loaded, 0 problem(s), 1 tool(s).\nLoaded:\n- hello 1.0.0: hello_world") {
		t.Fatalf("reload = %s", text)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var hello *mcp.Tool
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if tl.Name == "hello_world" {
			hello = tl
		}
	}
	if hello == nil {
		t.Fatalf("tools/list lacks hello_world: %v", names)
	}
	// Plugin tools come right after the natives.
	i := slices.Index(names, "hello_world")
	for _, n := range names[:i] {
		if _, ok := native.Lookup(n); !ok {
			t.Errorf("%s is listed before hello_world but is no native", n)
		}
	}
	// The listing states hints only where they differ from the defaults,
	// and for a read-only tool only readOnly and openWorld.
	if hello.Title != "Hello World" || hello.Annotations == nil || !hello.Annotations.ReadOnlyHint ||
		hello.Annotations.OpenWorldHint == nil || *hello.Annotations.OpenWorldHint ||
		hello.Description != "Say hello to someone (or to the world)." {
		t.Errorf("hello_world = %+v %+v", hello, hello.Annotations)
	}
	if text, isErr := routertest.CallText(t, cs, "hello_world", map[string]any{"name": "Ada"}); isErr || text != "Hello, Ada! (from the hello_world tool of an evokore plugin)" {
		t.Errorf("hello_world Ada = %v %q", isErr, text)
	}
	if text, _ := routertest.CallText(t, cs, "hello_world", map[string]any{}); text != "Hello, World! (from the hello_world tool of an evokore plugin)" {
		t.Errorf("hello_world = %q", text)
	}
	if text, isErr := routertest.CallText(t, cs, "hello_world", map[string]any{"name": 7}); !isErr || !strings.Contains(text, "Invalid arguments for 'hello_world'") {
		t.Errorf("the plugin's schema is enforced: %v %q", isErr, text)
	}

	// Removed and reloaded: gone from the list and from dispatch.
	if err := os.RemoveAll(filepath.Join(dir, "hello")); err != nil {
		t.Fatal(err)
	}
	if text, _ := routertest.CallText(t, cs, "reload_plugins", map[string]any{}); !strings.Contains(text, ": 0 loaded, 0 problem(s), 0 tool(s).") {
		t.Errorf("reload after removal = %s", text)
	}
	if slices.Contains(routertest.ToolNames(t, cs), "hello_world") {
		t.Error("hello_world is still listed")
	}
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hello_world", Arguments: map[string]any{}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != -32601 || we.Message != "Unknown tool: hello_world" {
		t.Errorf("call after removal = %v", err)
	}
}

func TestMisbehavingPluginTools(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plugins")
	install(t, dir, "testdata/faulty")
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_PLUGINS_DIR": dir, "ROUTER_SECRET": "do-not-leak"})
	cs := h.Connect(nil)
	if text, _ := routertest.CallText(t, cs, "reload_plugins", map[string]any{}); !strings.Contains(text, "1 loaded, 0 problem(s), 7 tool(s).") {
		t.Fatalf("reload = %s", text)
	}

	text, isErr := routertest.CallText(t, cs, "sleepy", map[string]any{})
	if !isErr || text != "Plugin tool 'sleepy' timed out after 1500ms; its processes were stopped." {
		t.Errorf("sleepy = %v %q", isErr, text)
	}
	for _, f := range []string{"sleepy.pid", "sleepy-child.pid"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == 0 {
			t.Fatalf("%s: %v", f, err)
		}
		routertest.WaitFor(t, f+" to be gone", func() bool {
			return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) || !procgroup.Alive(pid)
		})
	}

	cases := map[string]string{
		"crash":   "Plugin tool 'crash' exited with status 3: boom",
		"garbled": "Plugin tool 'garbled' did not print a tool result ({\"content\": [...]}) on stdout: invalid character 'h' looking for beginning of value.",
		"refuses": "bad input",
	}
	for tool, want := range cases {
		if text, isErr := routertest.CallText(t, cs, tool, map[string]any{}); !isErr || text != want {
			t.Errorf("%s = %v %q, want %q", tool, isErr, text, want)
		}
	}

	res := routertest.Call(t, cs, "echo_args", map[string]any{"text": `quotes " and \ survive`})
	got, _ := json.Marshal(res.StructuredContent)
	if res.IsError || routertest.Text(res) != "echoed" || string(got) != `{"text":"quotes \" and \\ survive"}` {
		t.Errorf("echo_args = %+v %s", res, got)
	}

	text, _ = routertest.CallText(t, cs, "show_env", map[string]any{})
	names, greeting, _ := strings.Cut(text, "| ")
	env := strings.Fields(names)
	for _, want := range []string{"EVOKORE_PLUGIN_DIR", "EVOKORE_SESSION_ID", "EVOKORE_TOOL_NAME", "GREETING", "PATH"} {
		if !slices.Contains(env, want) {
			t.Errorf("the plugin does not see %s: %v", want, env)
		}
	}
	if slices.Contains(env, "ROUTER_SECRET") || slices.Contains(env, "EVOKORE_HOME") || greeting != "from the manifest" {
		t.Errorf("environment = %v, greeting %q", env, greeting)
	}

	if runtime.GOOS == "linux" {
		// A helper that left the group and the session still goes with
		// the tool that started it.
		if text, isErr := routertest.CallText(t, cs, "leaves_helper", map[string]any{}); isErr || text != "left a helper" {
			t.Fatalf("leaves_helper = %v %q", isErr, text)
		}
		b, err := os.ReadFile(filepath.Join(dir, "helper.pid"))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == 0 {
			t.Fatalf("helper.pid: %v", err)
		}
		routertest.WaitGone(t, 10*time.Second, pid)
	}
}

func TestStartPublishesWhatRegisterLoaded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plugins")
	install(t, dir, "examples/hello")
	settings, _ := config.ReadSettings(config.NewEnv(map[string]string{"EVOKORE_PLUGINS_DIR": dir, "EVOKORE_HOME": t.TempDir(), "PATH": os.Getenv("PATH")}), config.Defaults{})
	host := &native.Host{}
	table := &native.Table{}
	m := plugins.Register(table, settings.PluginsDir, settings.Env, host)
	if _, ok := table.Handler("reload_plugins"); !ok {
		t.Error("reload_plugins is not bound")
	}
	store := catalog.NewStore(table.Entries(), nil)
	host.Catalog = store
	if _, ok := store.Snapshot().Lookup("hello_world"); ok {
		t.Fatal("published before Start")
	}
	m.Start()
	e, ok := store.Snapshot().Lookup("hello_world")
	if !ok || e.Source != catalog.SourcePlugin || e.Tool.Title != "Hello World" {
		t.Fatalf("after Start: %+v %v", e, ok)
	}
	if l := m.Current(); len(l.Plugins) != 1 || l.Plugins[0].Dir != filepath.Join(dir, "hello") {
		t.Errorf("current load = %+v", l)
	}
}

func TestNoPluginsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_PLUGINS_DIR": dir})
	cs := h.Connect(nil)
	text, isErr := routertest.CallText(t, cs, "reload_plugins", map[string]any{})
	if got := took.ReplaceAllString(text, " in 0ms:"); isErr || got != "Plugins reloaded from "+dir+" in 0ms: 0 loaded, 0 problem(s), 0 tool(s)." {
		t.Errorf("reload = %q", text)
	}
}
