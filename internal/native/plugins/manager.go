package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/logging"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// DefaultTimeout bounds a call when the manifest sets no timeoutMs.
const DefaultTimeout = 30 * time.Second

// maxOutput bounds what a plugin may print on stdout.
const maxOutput = 8 << 20

// Plugin is one loaded plugin.
type Plugin struct {
	Manifest *config.PluginManifest
	Dir      string
	// Tools are the names this plugin serves (skipped ones excluded).
	Tools []string
}

type tool struct {
	plugin *Plugin
	def    config.PluginTool
}

// Load is the result of reading the plugins directory.
type Load struct {
	Dir     string
	Plugins []*Plugin
	// Problems are broken manifests and skipped tools, one line each.
	Problems []string
	Took     time.Duration

	tools     map[string]*tool
	entries   []*catalog.Entry
	resources []*resource
}

// Manager loads plugins and runs their tools.
type Manager struct {
	dir string
	env config.Env
	log *slog.Logger
	// catalog returns the catalog to publish into; it exists only once
	// the router is assembled.
	catalog func() *catalog.Store

	// sessions lists the connected sessions, to announce a reload.
	sessions func() []*session.Session

	mu      sync.Mutex // one load at a time
	current atomic.Pointer[Load]
}

// New returns a manager of the plugins under dir.
func New(dir string, env config.Env, log *slog.Logger, store func() *catalog.Store) *Manager {
	if log == nil {
		log = logging.Discard()
	}
	m := &Manager{dir: dir, env: env, log: log, catalog: store}
	m.current.Store(&Load{Dir: dir, tools: map[string]*tool{}})
	return m
}

// Register reads the plugins (so that problems are logged at start),
// binds reload_plugins and returns the manager, which is also the
// dispatcher of plugin tools. Call Start once the catalog exists to
// publish the tools loaded here.
func Register(t *native.Table, dir string, env config.Env, host *native.Host) *Manager {
	m := New(dir, env, host.Log, func() *catalog.Store { return host.Catalog })
	m.sessions = host.Sessions
	m.mu.Lock()
	l := m.read()
	m.current.Store(l)
	m.mu.Unlock()
	m.report(l)
	t.Bind(native.ReloadPlugins, m.reloadTool)
	return m
}

// Start publishes the plugin tools loaded at registration.
func (m *Manager) Start() {
	if store := m.catalog(); store != nil {
		store.SetPlugins(m.current.Load().entries)
	}
}

// Current is the latest load.
func (m *Manager) Current() *Load { return m.current.Load() }

// Reload reads the plugins again and publishes their tools in place of
// the previous ones.
func (m *Manager) Reload() *Load {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.read()
	m.current.Store(l)
	if store := m.catalog(); store != nil {
		store.SetPlugins(l.entries)
	}
	return l
}

// read loads every plugin folder.
func (m *Manager) read() *Load {
	start := time.Now()
	l := &Load{Dir: m.dir, Plugins: []*Plugin{}, tools: map[string]*tool{}}
	defer func() { l.Took = time.Since(start) }()
	dirs, err := os.ReadDir(m.dir)
	if errors.Is(err, os.ErrNotExist) {
		return l
	}
	if err != nil {
		l.Problems = append(l.Problems, fmt.Sprintf("%s: %v", m.dir, err))
		return l
	}
	names := map[string]string{} // plugin name → folder
	for _, d := range dirs {
		if strings.HasPrefix(d.Name(), ".") {
			continue
		}
		folder := filepath.Join(m.dir, d.Name())
		if fi, err := os.Stat(folder); err != nil || !fi.IsDir() {
			continue
		}
		file := filepath.Join(folder, "plugin.json")
		if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
			continue // not a plugin
		}
		man, err := config.LoadPluginManifest(file)
		if err != nil {
			var ds config.Diagnostics
			if errors.As(err, &ds) {
				for _, d := range ds {
					l.Problems = append(l.Problems, d.String()+" (plugin skipped)")
				}
			} else {
				l.Problems = append(l.Problems, fmt.Sprintf("%s: %v (plugin skipped)", file, err))
			}
			continue
		}
		if other, dup := names[man.Name]; dup {
			l.Problems = append(l.Problems, fmt.Sprintf("%s: plugin name %q is already used by %s (plugin skipped)", file, man.Name, other))
			continue
		}
		names[man.Name] = folder
		p := &Plugin{Manifest: man, Dir: folder, Tools: []string{}}
		for _, td := range man.Tools {
			addTool(l, p, td, file)
		}
		l.Plugins = append(l.Plugins, p)
	}
	m.readJS(l, names)
	return l
}

// addTool publishes a plugin's tool unless a native or an earlier plugin
// has its name; file is where the tool was declared.
func addTool(l *Load, p *Plugin, td config.PluginTool, file string) {
	if _, native := native.Lookup(td.Name); native {
		l.Problems = append(l.Problems, fmt.Sprintf("%s: tool %q has the name of a native tool (tool skipped)", file, td.Name))
		return
	}
	if prev, taken := l.tools[td.Name]; taken {
		l.Problems = append(l.Problems, fmt.Sprintf("%s: tool %q is already served by plugin %q (tool skipped)", file, td.Name, prev.plugin.Manifest.Name))
		return
	}
	l.tools[td.Name] = &tool{plugin: p, def: td}
	l.entries = append(l.entries, catalog.NewEntry(definition(td), catalog.SourcePlugin))
	p.Tools = append(p.Tools, td.Name)
}

// definition is the MCP tool clients see for a plugin tool.
func definition(td config.PluginTool) *mcp.Tool {
	t := &mcp.Tool{Name: td.Name, Title: td.Title, Description: td.Description, InputSchema: td.InputSchema}
	if a := td.Annotations; a != nil {
		t.Annotations = &mcp.ToolAnnotations{Title: a.Title, DestructiveHint: a.DestructiveHint, OpenWorldHint: a.OpenWorldHint}
		if a.ReadOnlyHint != nil {
			t.Annotations.ReadOnlyHint = *a.ReadOnlyHint
		}
		if a.IdempotentHint != nil {
			t.Annotations.IdempotentHint = *a.IdempotentHint
		}
	}
	return t
}

func (l *Load) toolCount() int { return len(l.tools) }

// Summary is reload_plugins' answer.
func (l *Load) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Plugins reloaded from %s in %dms: %d loaded, %d problem(s), %d tool(s).",
		l.Dir, l.Took.Milliseconds(), len(l.Plugins), len(l.Problems), l.toolCount())
	if len(l.Plugins) > 0 {
		b.WriteString("\nLoaded:")
		for _, p := range l.Plugins {
			tools := "no tools"
			if len(p.Tools) > 0 {
				tools = strings.Join(p.Tools, ", ")
			}
			fmt.Fprintf(&b, "\n- %s: %s", p.Manifest, tools)
		}
	}
	if len(l.Problems) > 0 {
		b.WriteString("\nProblems:")
		for _, p := range l.Problems {
			b.WriteString("\n- " + p)
		}
	}
	return b.String()
}

// report logs a load at start.
func (m *Manager) report(l *Load) {
	if len(l.Plugins) == 0 && len(l.Problems) == 0 {
		return
	}
	m.log.Info("[EVOKORE] Plugins loaded", "dir", l.Dir, "ok", len(l.Plugins), "problems", len(l.Problems), "tools", l.toolCount())
	for _, p := range l.Problems {
		// A positioned problem keeps its file:line:col form, which editors read.
		m.log.Info("[EVOKORE] Plugin problem: " + p)
	}
}

func (m *Manager) reloadTool(context.Context, *native.Call) (*mcp.CallToolResult, error) {
	l := m.Reload()
	// Clients re-list after a reload even when no name changed, as they
	// did with EVOKORE-MCP: a plugin's behaviour may have.
	if m.sessions != nil {
		for _, s := range m.sessions() {
			s.Invalidate()
		}
	}
	return native.Text("%s", l.Summary()), nil
}

var _ router.Dispatcher = (*Manager)(nil)

// CallTool runs a plugin tool.
func (m *Manager) CallTool(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	t, ok := m.current.Load().tools[c.Entry.Name]
	if !ok {
		return nil, router.UnknownTool(c.Entry.Name)
	}
	sessionID := ""
	if c.Session != nil {
		sessionID = c.Session.ID
	}
	return m.run(ctx, t, c.Args, sessionID)
}

// run executes one call of a plugin tool.
func (m *Manager) run(ctx context.Context, t *tool, args json.RawMessage, sessionID string) (*mcp.CallToolResult, error) {
	name := t.def.Name
	limit := DefaultTimeout
	if t.def.TimeoutMs > 0 {
		limit = time.Duration(t.def.TimeoutMs) * time.Millisecond
	}
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	command := t.def.Command
	if !filepath.IsAbs(command) && strings.ContainsAny(command, `/\`) {
		command = filepath.Join(t.plugin.Dir, command)
	}
	// The launcher gives the tool its own group and the parent-death
	// signal, kills its tree on timeout, and kills the helpers it left
	// behind once it exits.
	cmd := procgroup.Command(cctx, procgroup.Spec{Path: command, Args: t.def.Args, Dir: t.plugin.Dir,
		Env: m.environment(t, sessionID), Grace: 2 * time.Second})
	cmd.Stdin = bytes.NewReader(args)
	stdout := &limitedBuffer{max: maxOutput}
	stderr := &limitedBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return native.Errorf("Plugin tool '%s' timed out after %dms; its processes were stopped.", name, limit.Milliseconds()), nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case cmd.ProcessState == nil:
		return native.Errorf("Plugin tool '%s' could not start %s: %v", name, t.def.Command, err), nil
	case stdout.overflow:
		return native.Errorf("Plugin tool '%s' printed more than %d bytes; a tool result must be smaller.", name, maxOutput), nil
	}
	res, perr := parseResult(stdout.Bytes())
	code := cmd.ProcessState.ExitCode()
	if perr != nil {
		if code != 0 {
			return native.Errorf("Plugin tool '%s' exited with status %d%s", name, code, tail(stderr.String())), nil
		}
		return native.Errorf("Plugin tool '%s' did not print a tool result ({\"content\": [...]}) on stdout: %v%s", name, perr, tail(stderr.String())), nil
	}
	if code != 0 {
		res.IsError = true
	}
	return res, nil
}

// parseResult reads the one JSON object a plugin prints.
func parseResult(out []byte) (*mcp.CallToolResult, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return nil, errors.New("stdout was empty")
	}
	var probe struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(out, &probe); err != nil {
		return nil, err
	}
	if len(probe.Content) == 0 || probe.Content[0] != '[' {
		return nil, errors.New(`the object has no "content" array`)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func tail(stderr string) string {
	stderr = strings.TrimSpace(stderr)
	if stderr == "" {
		return "."
	}
	if len(stderr) > 2000 {
		stderr = "…" + stderr[len(stderr)-2000:]
	}
	return ": " + stderr
}

// environment is a call's environment: the launcher's base allowlist,
// the plugin's env, and what the call is about.
func (m *Manager) environment(t *tool, sessionID string) procgroup.Env {
	vars := map[string]string{}
	for k, v := range t.plugin.Manifest.Env {
		vars[k] = v
	}
	vars["EVOKORE_TOOL_NAME"] = t.def.Name
	vars["EVOKORE_PLUGIN_DIR"] = t.plugin.Dir
	vars["EVOKORE_SESSION_ID"] = sessionID
	return procgroup.Env{Parent: m.env, Set: vars}
}

// limitedBuffer keeps up to max bytes and notes whether more came.
type limitedBuffer struct {
	bytes.Buffer
	max      int
	overflow bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.overflow = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
