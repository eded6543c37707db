package plugins

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/procgroup"
)

// hostScript runs EVOKORE-MCP's JavaScript plugins under node; see its
// header for the protocol.
//
//go:embed jshost.js
var hostScript string

// jsLoadTimeout bounds loading one JavaScript plugin.
const jsLoadTimeout = 30 * time.Second

// jsPlugin is what the host reports of one plugins/*.js file.
type jsPlugin struct {
	File    string `json:"file"`
	Error   string `json:"error"`
	Name    string `json:"name"`
	Version string `json:"version"`
	Tools   []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations json.RawMessage `json:"annotations"`
	} `json:"tools"`
	Resources []struct {
		URI         string `json:"uri"`
		Name        string `json:"name"`
		MIMEType    string `json:"mimeType"`
		Description string `json:"description"`
	} `json:"resources"`
}

// resource is a resource a JavaScript plugin serves.
type resource struct {
	res  *mcp.Resource
	node string
	file string
}

// jsFiles are the plugins directory's top-level *.js files, as the
// original loaded them.
func jsFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".js") {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			out = append(out, filepath.Join(dir, name))
		}
	}
	sort.Strings(out)
	return out
}

// lookNode finds node on the router's PATH (the one its settings carry,
// which is what plugin processes get).
func (m *Manager) lookNode() string {
	path, _ := m.env.Lookup("PATH")
	names := []string{"node"}
	if runtime.GOOS == "windows" {
		names = []string{"node.exe", "node.cmd"}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		for _, n := range names {
			p := filepath.Join(dir, n)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && (runtime.GOOS == "windows" || fi.Mode()&0o111 != 0) {
				return p
			}
		}
	}
	return ""
}

// hostArgs are node's arguments to run the host in mode.
func hostArgs(mode string, args ...string) []string {
	return append([]string{"-e", hostScript, "--", mode}, args...)
}

// startHost runs the host once and returns what it printed. It is the one
// place a host process starts for loading and reading resources.
func (m *Manager) startHost(ctx context.Context, node string, args []string, limit time.Duration) (stdout []byte, stderr string, err error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := procgroup.Command(ctx, procgroup.Spec{Path: node, Args: args, Dir: m.dir,
		Env:   m.environment(&tool{plugin: &Plugin{Manifest: &config.PluginManifest{}, Dir: m.dir}}, ""),
		Grace: 2 * time.Second})
	out := &limitedBuffer{max: maxOutput}
	errOut := &limitedBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, errOut
	err = cmd.Run()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, errOut.String(), fmt.Errorf("timed out after %s", limit)
	case out.overflow:
		return nil, errOut.String(), fmt.Errorf("printed more than %d bytes", maxOutput)
	case err != nil:
		return nil, errOut.String(), fmt.Errorf("%v%s", err, tail(errOut.String()))
	}
	return out.Bytes(), errOut.String(), nil
}

// readJS loads the JavaScript plugins into l. Without node each is
// skipped with a problem naming it; a file that fails to load is a
// problem of its own, the others load.
func (m *Manager) readJS(l *Load, names map[string]string) {
	files := jsFiles(m.dir)
	if len(files) == 0 {
		return
	}
	node := m.lookNode()
	if node == "" {
		for _, f := range files {
			l.Problems = append(l.Problems, fmt.Sprintf("%s: skipped: node is not on PATH, and JavaScript plugins run under Node.js", f))
		}
		return
	}
	uris := map[string]string{}
	for _, jp := range m.listJS(node, files) {
		if jp.Error != "" {
			l.Problems = append(l.Problems, fmt.Sprintf("%s: %s (plugin skipped)", jp.File, jp.Error))
			continue
		}
		if other, dup := names[jp.Name]; dup {
			l.Problems = append(l.Problems, fmt.Sprintf("%s: plugin name %q is already used by %s (plugin skipped)", jp.File, jp.Name, other))
			continue
		}
		names[jp.Name] = jp.File
		p := &Plugin{Manifest: &config.PluginManifest{File: jp.File, Name: jp.Name, Version: jp.Version}, Dir: m.dir, Tools: []string{}}
		for _, jt := range jp.Tools {
			def := config.PluginTool{Name: jt.Name, Description: jt.Description, InputSchema: jt.InputSchema,
				Command: node, Args: hostArgs("call", jp.File, jt.Name)}
			if why := checkJSTool(jt.Name, jt.InputSchema); why != "" {
				l.Problems = append(l.Problems, fmt.Sprintf("%s: tool %q %s (tool skipped)", jp.File, jt.Name, why))
				continue
			}
			if len(jt.Annotations) > 0 && json.Unmarshal(jt.Annotations, &def.Annotations) != nil {
				def.Annotations = nil
			}
			addTool(l, p, def, jp.File)
		}
		for _, jr := range jp.Resources {
			if other, dup := uris[jr.URI]; dup {
				l.Problems = append(l.Problems, fmt.Sprintf("%s: resource %q is already served by plugin %q (resource skipped)", jp.File, jr.URI, other))
				continue
			}
			uris[jr.URI] = jp.Name
			l.resources = append(l.resources, &resource{node: node, file: jp.File,
				res: &mcp.Resource{URI: jr.URI, Name: jr.Name, MIMEType: jr.MIMEType, Description: jr.Description}})
		}
		l.Plugins = append(l.Plugins, p)
	}
}

// jsListParallel is how many JavaScript plugins load at once.
const jsListParallel = 4

// listJS loads each file in a host process of its own, a few at a time,
// in files' order: a plugin that hangs, exits, or prints on the real
// stdout while loading spoilt the one report they all shared, so every
// JavaScript plugin was skipped; now it costs only its own file.
func (m *Manager) listJS(node string, files []string) []jsPlugin {
	out := make([]jsPlugin, len(files))
	slots := make(chan struct{}, jsListParallel)
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			out[i] = m.listOneJS(node, f)
		})
	}
	wg.Wait()
	return out
}

// listOneJS loads one file; a failure is the plugin's error.
func (m *Manager) listOneJS(node, file string) jsPlugin {
	out, stderr, err := m.startHost(context.Background(), node, hostArgs("list", file), jsLoadTimeout)
	if strings.TrimSpace(stderr) != "" {
		m.log.Info(strings.TrimRight(stderr, "\n"))
	}
	var report struct {
		Plugins []jsPlugin `json:"plugins"`
	}
	if err == nil {
		err = json.Unmarshal(out, &report)
	}
	if err == nil && (len(report.Plugins) != 1 || report.Plugins[0].File != file) {
		err = errors.New("its report names other files")
	}
	if err != nil {
		return jsPlugin{File: file, Error: fmt.Sprintf("the JavaScript plugin host failed: %v", err)}
	}
	return report.Plugins[0]
}

// checkJSTool says why a tool cannot be published, or "".
func checkJSTool(name string, schema json.RawMessage) string {
	if !validToolName(name) {
		return "has a name MCP does not allow"
	}
	var s struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(schema, &s) != nil || s.Type != "object" {
		return `has an inputSchema that is not {"type": "object", ...}`
	}
	return ""
}

// validToolName is MCP's rule: 1 to 128 of [A-Za-z0-9_.-].
func validToolName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Resources are the resources the loaded plugins serve, in load order.
func (m *Manager) Resources() []*mcp.Resource {
	l := m.current.Load()
	out := make([]*mcp.Resource, 0, len(l.resources))
	for _, r := range l.resources {
		out = append(out, r.res)
	}
	return out
}

// ReadResource reads a plugin resource; ok is false when no plugin
// serves uri.
func (m *Manager) ReadResource(ctx context.Context, uri string) (res *mcp.ReadResourceResult, ok bool, err error) {
	for _, r := range m.current.Load().resources {
		if r.res.URI != uri {
			continue
		}
		out, _, err := m.startHost(ctx, r.node, hostArgs("read", r.file, uri), DefaultTimeout)
		var body struct {
			Text *string `json:"text"`
		}
		if err == nil {
			if err = json.Unmarshal(bytes.TrimSpace(out), &body); err == nil && body.Text == nil {
				err = errors.New(`it printed no "text"`)
			}
		}
		if err != nil {
			return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("Plugin resource %s could not be read: %v", uri, err)}
		}
		mime := r.res.MIMEType
		if mime == "" {
			mime = "text/plain"
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: *body.Text}}}, true, nil
	}
	return nil, false, nil
}
