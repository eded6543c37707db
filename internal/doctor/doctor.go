// Package doctor checks what a user gets wrong setting evokore up, and
// says for each problem how to fix it: the config and permissions (vet),
// every child server's command and first boot, the toolchains configs
// lean on (node, npx, uvx), EVOKORE_HOME, the default ports, a server
// that would start evokore itself, the project directory's trust, the
// Claude Code hooks and the clients evokore is connected to.
//
// It reads, boots children once and listens on nothing it keeps; it
// changes no file of the user's (booting refreshes the tool-list cache,
// as 'evokore vet --live' does).
package doctor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/evokore/evokore/internal/childauth"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/connect"
	"github.com/evokore/evokore/internal/hooks"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/trust"
	"github.com/evokore/evokore/internal/vet"
)

// Finding is one check's outcome. A finding that is neither OK nor a
// Note is a problem: doctor exits 1 when it has one.
type Finding struct {
	OK, Note bool
	// Text says what is the case; Fix what to do about it.
	Text, Fix string
	// Detail is supporting output, such as a child's last stderr lines.
	Detail []string
}

// Port is a default address something of evokore's listens on.
type Port struct {
	// What listens ("evokore serve --http"), Addr where, and Setting the
	// variable that moves it.
	What, Addr, Setting string
}

// Options say what to check.
type Options struct {
	// Home is EVOKORE_HOME, checked for being writable; it holds the trust
	// record and the children's tool-list cache.
	Home string
	// Env resolves the children's placeholders.
	Env config.Env
	// ConfigPath is the mcp.config.json checked; ConfigFrom what chose it.
	// PermissionsPath and PermissionsFrom likewise.
	ConfigPath, ConfigFrom           string
	PermissionsPath, PermissionsFrom string
	// Children bound each child's boot.
	Children config.ChildTimeouts
	Ports    []Port
	// ProjectDir is the directory checked for trust; UserHome the home
	// directory holding ~/.claude.
	ProjectDir, UserHome string
	Clients              []connect.State
}

type report struct{ out []Finding }

func (r *report) ok(format string, args ...any) {
	r.out = append(r.out, Finding{OK: true, Text: fmt.Sprintf(format, args...)})
}

func (r *report) problem(text, fix string, detail ...string) {
	r.out = append(r.out, Finding{Text: text, Fix: fix, Detail: detail})
}

func (r *report) note(text, fix string) {
	r.out = append(r.out, Finding{Note: true, Text: text, Fix: fix})
}

// Run runs every check, in the order a user would fix things.
func Run(o Options) []Finding {
	r := &report{}
	cfg := r.vet(o)
	r.children(o, cfg)
	r.home(o.Home)
	r.ports(o.Ports)
	r.trust(o)
	r.hooks(o.UserHome, o.ProjectDir)
	r.shell(o)
	r.clients(o.Clients)
	return r.out
}

// Problems counts the findings that fail.
func Problems(fs []Finding) int {
	n := 0
	for _, f := range fs {
		if !f.OK && !f.Note {
			n++
		}
	}
	return n
}

func (r *report) vet(o Options) *config.MCPConfig {
	ds, _ := vet.RunReport(vet.Options{
		ConfigPath: o.ConfigPath, PermissionsPath: o.PermissionsPath,
		ConfigFrom: o.ConfigFrom, PermissionsFrom: o.PermissionsFrom,
		Env: o.Env, Home: o.Home, Children: o.Children,
	})
	errs := 0
	for _, d := range ds {
		if d.Severity == config.SeverityError {
			errs++
			r.problem(d.String(), "correct it there; 'evokore vet' checks again")
		}
	}
	if errs == 0 {
		r.ok("config and permissions pass vet (%s, %s)", o.ConfigPath, o.PermissionsPath)
	}
	cfg, err := config.LoadMCPConfig(o.ConfigPath)
	if err != nil {
		return nil
	}
	if cfg.Missing {
		r.note(fmt.Sprintf("%s does not exist: evokore serves its own tools only", o.ConfigPath),
			"add child servers there, or bring a client's with 'evokore connect CLIENT --import'")
	}
	return cfg
}

// toolchain says what to install for a missing command.
func toolchain(cmd string) string {
	switch strings.TrimSuffix(strings.ToLower(filepath.Base(cmd)), ".cmd") {
	case "npx", "node", "npm":
		return "install Node.js 18 or later (it brings node and npx)"
	case "uvx", "uv":
		return "install uv (it brings uvx)"
	case "python", "python3":
		return "install Python 3"
	case "docker":
		return "install Docker and start it"
	case "bunx", "bun":
		return "install Bun"
	}
	return ""
}

func (r *report) children(o Options, cfg *config.MCPConfig) {
	if cfg == nil {
		return
	}
	var boot []config.Server
	for _, srv := range cfg.Servers {
		if srv.Disabled || srv.Invalid != "" {
			continue
		}
		res, err := srv.Resolve(o.Env)
		var self *config.SelfReferenceError
		switch {
		case errors.As(err, &self):
			r.problem(fmt.Sprintf("server '%s' would start evokore itself: %v", srv.ID, err),
				fmt.Sprintf("remove '%s' from %s: evokore would start itself without end", srv.ID, o.ConfigPath))
			continue
		case err != nil:
			r.problem(fmt.Sprintf("server '%s' cannot start: %v", srv.ID, err), "set the variable where the client starts evokore, or write the value in the server's env")
			continue
		}
		if res.IsHTTP() {
			boot = append(boot, srv)
			continue
		}
		if why, self := connect.StartsEvokore(res.Command, res.Args, res.Dir); self {
			r.problem(fmt.Sprintf("server '%s' would start evokore itself (%s)", srv.ID, why),
				fmt.Sprintf("remove '%s' from %s: evokore would start itself without end", srv.ID, o.ConfigPath))
			continue
		}
		path := res.Command
		if strings.ContainsAny(path, `/\`) && !filepath.IsAbs(path) {
			path = filepath.Join(res.Dir, path)
		}
		found, err := exec.LookPath(path)
		if err != nil {
			fix := toolchain(res.Command)
			if fix == "" {
				fix = "install it"
			}
			r.problem(fmt.Sprintf("server '%s': command '%s' is not found", srv.ID, res.Command),
				fix+", or write its absolute path in "+o.ConfigPath)
			continue
		}
		if strings.EqualFold(strings.TrimSuffix(filepath.Base(found), ".cmd"), "npx") {
			if _, err := exec.LookPath("node"); err != nil {
				r.problem(fmt.Sprintf("server '%s' runs npx, but node is not found", srv.ID), toolchain("node"))
				continue
			}
		}
		boot = append(boot, srv)
	}
	if len(boot) == 0 {
		return
	}
	var log lineLog
	statuses := proxy.BootOnce(proxy.Options{
		Servers: boot, Env: o.Env, Home: o.Home,
		BootTimeout: o.Children.Boot, RequestTimeout: o.Children.Request, ShutdownGrace: o.Children.ShutdownGrace,
		Log: &log, Version: "doctor",
		// Stored tokens are used; a child with none is reported, never
		// authorized from here.
		Authorizer: childauth.New(childauth.Options{Home: o.Home, Env: o.Env}),
	})
	for _, st := range statuses {
		if st.Status == proxy.StatusNeedsAuthorization {
			r.problem(fmt.Sprintf("server '%s' needs authorization", st.ID), fmt.Sprintf("run `evokore auth login %s`", st.ID))
			continue
		}
		if st.Status == proxy.StatusError {
			r.problem(fmt.Sprintf("server '%s' failed to boot: %s", st.ID, st.LastError),
				"run its command by hand to see the whole error (the last lines it wrote to stderr are above)", log.tail("["+st.ID+"] ", 10)...)
			continue
		}
		r.ok("server '%s' boots (%d tools)", st.ID, st.RegisteredToolCount)
	}
}

// lineLog keeps what the children wrote to stderr.
type lineLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// tail is the last n lines with prefix, prefix removed.
func (l *lineLog) tail(prefix string, n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			out = append(out, rest)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

func (r *report) home(home string) {
	fix := fmt.Sprintf("make %s writable (chmod u+w), or set EVOKORE_HOME to a directory you own", home)
	if err := os.MkdirAll(home, 0o700); err != nil {
		r.problem(fmt.Sprintf("EVOKORE_HOME %s cannot be created: %v", home, errors.Unwrap(err)), fix)
		return
	}
	f, err := os.CreateTemp(home, ".doctor-*")
	if err != nil {
		r.problem(fmt.Sprintf("EVOKORE_HOME %s is not writable: approvals, pins, sessions and records cannot be kept", home), fix)
		return
	}
	f.Close()
	os.Remove(f.Name())
	// Its files decide what runs (approvals, trusted projects, pins) and
	// are believed as they are: only the directory keeps others out.
	if fi, err := os.Stat(home); err == nil && othersCanWrite(fi) {
		r.problem(fmt.Sprintf("EVOKORE_HOME %s can be written by other users (%v): they could approve held calls and trust projects", home, fi.Mode().Perm()),
			fmt.Sprintf("chmod 700 %s and make it yours, or set EVOKORE_HOME to a directory only you can write", home))
		return
	}
	r.ok("EVOKORE_HOME %s is writable", home)
	r.state(home)
}

// state reads the files under home that decide what runs, as the router
// does; each one it cannot read fails closed there, so it is a problem
// here.
func (r *report) state(home string) {
	if _, err := policy.OpenPins(home, nil); err != nil {
		r.problem(err.Error(), "repair it from 'evokore pins list', or remove it: every tool is then pinned afresh at the next start")
	}
	if err := policy.CheckDecisions(home); err != nil {
		r.problem(err.Error()+": no approval-gated call runs until it is fixed",
			"remove or correct the line it names; a held call that lost its decision is asked again")
	}
	if err := trust.Check(home); err != nil {
		r.problem(err.Error()+": no project directory counts as trusted",
			"remove it, then run 'evokore trust' again in each project you trust")
	}
}

func (r *report) ports(ports []Port) {
	for _, p := range ports {
		l, err := net.Listen("tcp", p.Addr)
		if err != nil {
			r.problem(fmt.Sprintf("%s for %s is taken: %v", p.Addr, p.What, unwrapAll(err)),
				fmt.Sprintf("stop what listens there, or set %s to a free port", p.Setting))
			continue
		}
		l.Close()
		r.ok("%s is free for %s", p.Addr, p.What)
	}
}

func unwrapAll(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

func (r *report) trust(o Options) {
	home := o.Home
	dir := o.ProjectDir
	if _, err := os.Stat(filepath.Join(dir, "permissions.yml")); err == nil {
		if trust.Trusted(home, dir, "permissions.yml") {
			r.ok("%s/permissions.yml is trusted", dir)
		} else {
			r.problem(fmt.Sprintf("%s/permissions.yml is ignored: the directory is not trusted, so the user's own permissions apply", dir),
				"run 'evokore trust' there if it is yours (any later edit needs it again)")
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".env")); err == nil {
		_, _, ignored := config.LoadProjectEnv(filepath.Join(dir, ".env"), trust.Trusted(home, dir, ".env"))
		if len(ignored) > 0 {
			r.problem(fmt.Sprintf("%s/.env sets %s, ignored: the directory is not trusted", dir, strings.Join(ignored, ", ")),
				"run 'evokore trust' there if it is yours")
		}
	}
}

// settingsCommands are the hook and status line commands of a Claude
// Code settings.json. The project's comes with the repository, which
// may make it a symlink to /dev/zero: it is read within the cap.
func settingsCommands(path string) ([]string, bool) {
	b, err := safefile.Load(path, safefile.MaxConfigBytes)
	if err != nil {
		return nil, false
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
		StatusLine struct {
			Command string `json:"command"`
		} `json:"statusLine"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return nil, true
	}
	var out []string
	for _, groups := range doc.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				out = append(out, h.Command)
			}
		}
	}
	return append(out, doc.StatusLine.Command), true
}

func (r *report) hooks(userHome, project string) {
	_, errDir := os.Stat(filepath.Join(userHome, ".claude"))
	_, errFile := os.Stat(filepath.Join(userHome, ".claude.json"))
	if errors.Is(errDir, fs.ErrNotExist) && errors.Is(errFile, fs.ErrNotExist) {
		return // no Claude Code here
	}
	installed := false
	for _, path := range []string{filepath.Join(userHome, ".claude", "settings.json"), filepath.Join(project, ".claude", "settings.json")} {
		cmds, _ := settingsCommands(path)
		for _, c := range cmds {
			if !hooks.IsOurs(c) {
				continue
			}
			installed = true
			exe := hookExe(c)
			if _, err := os.Stat(exe); err != nil {
				r.problem(fmt.Sprintf("the hooks in %s run %s, which is not there", path, exe),
					"run 'evokore hooks install' again with this evokore")
				return
			}
		}
	}
	if installed {
		r.ok("Claude Code hooks are installed")
		return
	}
	r.note("Claude Code hooks are not installed (optional: damage control, evidence, session replay)", "evokore hooks install --user")
}

// shell says whether Claude Code's sandbox confines the agent's shell
// away from evokore's approval surfaces, reading the effective settings
// (user, project, local), and what that means for approvals.
func (r *report) shell(o Options) {
	_, errDir := os.Stat(filepath.Join(o.UserHome, ".claude"))
	_, errFile := os.Stat(filepath.Join(o.UserHome, ".claude.json"))
	if errors.Is(errDir, fs.ErrNotExist) && errors.Is(errFile, fs.ErrNotExist) {
		return // no Claude Code here
	}
	sb := hooks.SandboxFor(o.Home, o.Env.Get("EVOKORE_APPROVAL_KEY_FILE"))
	c := hooks.Confine(hooks.SettingsFiles(o.UserHome, o.ProjectDir), sb, o.UserHome)
	if c.Confined {
		text := "Claude Code's shell is confined by its sandbox (no write to " + o.Home + ", no read of the approval secrets, no path to this machine's network): approvals hold against the model's MCP calls and against the agent's shell"
		if len(c.Outside) > 0 {
			text += "; except the commands it runs outside the sandbox: " + strings.Join(c.Outside, ", ")
		}
		r.ok("%s", text)
		return
	}
	r.note("Claude Code's shell is not confined ("+strings.Join(c.Gaps, "; ")+"): approvals hold against the model's MCP calls; against the agent's shell only when confined",
		"evokore hooks install --sandbox (or --user --sandbox) turns on Claude Code's sandbox for it")
}

// hookExe is the executable of an installed hook command: the command
// up to " hook " or " status-line", unquoted.
func hookExe(c string) string {
	for _, sep := range []string{" hook ", " status-line"} {
		if i := strings.LastIndex(c, sep); i > 0 {
			c = c[:i]
			break
		}
	}
	c = strings.TrimSpace(c)
	if len(c) > 1 && c[0] == '\'' && c[len(c)-1] == '\'' {
		c = strings.ReplaceAll(c[1:len(c)-1], `'\''`, "'")
	}
	return c
}

func (r *report) clients(states []connect.State) {
	connected := 0
	for _, s := range states {
		switch {
		case s.Err != nil && s.Found:
			r.problem(fmt.Sprintf("%s's %s cannot be read: %v", s.Client.Title, s.File, s.Err), "fix the file; evokore connect leaves a file it cannot read alone")
		case !s.Connected:
		case s.Command == "":
			r.problem(fmt.Sprintf("%s's evokore entry in %s has no command", s.Client.Title, s.File), "evokore connect "+s.Client.Name)
		default:
			connected++
			if _, err := os.Stat(s.Command); err != nil && strings.ContainsAny(s.Command, `/\`) {
				r.problem(fmt.Sprintf("%s runs evokore from %s, which is not there", s.Client.Title, s.Command), "evokore connect "+s.Client.Name)
				continue
			}
			if s.Config != "" {
				if _, err := os.Stat(s.Config); err != nil {
					r.problem(fmt.Sprintf("%s's evokore serves %s, which does not exist", s.Client.Title, s.Config), "evokore connect "+s.Client.Name+" (creates it)")
					continue
				}
			}
			r.ok("%s is connected (%s)", s.Client.Title, s.File)
		}
	}
	if connected == 0 {
		r.note("no MCP client is connected to evokore", "evokore connect CLIENT ('evokore connect --list' shows the clients found)")
	}
}
