package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/evokore/evokore/internal/operatorkey"
	"github.com/evokore/evokore/internal/safefile"
)

// Claude Code can run its Bash tool in an operating-system sandbox
// (bubblewrap on Linux, Seatbelt on macOS), configured by the "sandbox"
// block of settings.json: "enabled", "allowUnsandboxedCommands" (false
// ignores the tool's dangerouslyDisableSandbox escape),
// "filesystem.denyWrite" and "filesystem.denyRead" (lists that merge
// across the user, project and local files; "~/" is the home directory,
// "//" the filesystem root), and "network" (the shell reaches the network
// only through Claude Code's proxy, to the hosts of "allowedDomains";
// "allowAllUnixSockets" opens every Unix socket). See docs/hooks.md.
//
// Confined that way, the agent's shell cannot write EVOKORE_HOME (the
// approvals, pins, trust and config), read the approval secrets, or
// reach the dashboard and approvals feed on this machine: evokore's
// approvals then hold against the shell too, which no list of command
// forms achieves (docs/security.md).

// Sandbox is what evokore asks Claude Code's sandbox to keep from the
// agent's shell, as absolute paths.
type Sandbox struct {
	// DenyWrite are the directories the shell may not write: EVOKORE_HOME.
	DenyWrite []string
	// DenyRead are the approval secrets.
	DenyRead []string
}

// SandboxFor is the sandbox for EVOKORE_HOME evokoreHome: no write under
// it, no read of its secrets folder nor of the approval key file
// (EVOKORE_APPROVAL_KEY_FILE, when set).
func SandboxFor(evokoreHome, keyFile string) Sandbox {
	sb := Sandbox{DenyWrite: []string{evokoreHome}, DenyRead: []string{filepath.Join(evokoreHome, operatorkey.Dir)}}
	if keyFile != "" {
		sb.DenyRead = append(sb.DenyRead, keyFile)
	}
	return sb
}

// sandboxPath writes an absolute path as Claude Code's sandbox settings
// read it: "~/…" under the home directory, "//…" elsewhere (a single "/"
// would be relative to the settings file).
func sandboxPath(abs, userHome string) string {
	abs = filepath.Clean(abs)
	if userHome != "" {
		if rel, err := filepath.Rel(userHome, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			if rel == "." {
				return "~/"
			}
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return "/" + filepath.ToSlash(abs)
}

// settingsPath reads a path of Claude Code's sandbox settings back as an
// absolute one: "~/" from userHome, "//" from the root, "/" and relative
// paths from dir (the settings file's directory).
func settingsPath(p, userHome, dir string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		return filepath.Join(userHome, strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/"))
	case strings.HasPrefix(p, "//"):
		return filepath.Clean(p[1:])
	default:
		return filepath.Join(dir, p)
	}
}

// mergeSandbox turns on Claude Code's sandbox in root with sb's paths
// added to the lists the user already keeps; local hosts leave
// allowedDomains and allowAllUnixSockets is turned off, so the shell has
// no path to the dashboard or the approvals feed. Everything else the
// block holds is kept as written.
func mergeSandbox(root *object, sb Sandbox, userHome string) error {
	box, err := member(root, "sandbox")
	if err != nil {
		return err
	}
	setValue(box, "enabled", true)
	setValue(box, "allowUnsandboxedCommands", false)
	fsObj, err := member(box, "filesystem")
	if err != nil {
		return err
	}
	if err := addPaths(fsObj, "denyWrite", sb.DenyWrite, userHome); err != nil {
		return err
	}
	if err := addPaths(fsObj, "denyRead", sb.DenyRead, userHome); err != nil {
		return err
	}
	if err := putMember(box, "filesystem", fsObj); err != nil {
		return err
	}
	if err := closeNetwork(box); err != nil {
		return err
	}
	return putMember(root, "sandbox", box)
}

// closeNetwork removes local hosts from sandbox.network.allowedDomains
// and turns allowAllUnixSockets off, when the block has them.
func closeNetwork(box *object) error {
	if _, ok := box.get("network"); !ok {
		return nil
	}
	net, err := member(box, "network")
	if err != nil {
		return err
	}
	if raw, ok := net.get("allowedDomains"); ok {
		var domains []string
		if err := json.Unmarshal(raw, &domains); err != nil {
			return fmt.Errorf("sandbox.network.allowedDomains is not a list of strings: %w", err)
		}
		kept := slices.DeleteFunc(slices.Clone(domains), localDomain)
		if len(kept) != len(domains) {
			b, _ := json.Marshal(kept)
			net.set("allowedDomains", b)
		}
	}
	if raw, ok := net.get("allowAllUnixSockets"); ok && string(bytes.TrimSpace(raw)) == "true" {
		setValue(net, "allowAllUnixSockets", false)
	}
	return putMember(box, "network", net)
}

// localDomain reports an allowedDomains entry that reaches this machine.
func localDomain(d string) bool {
	d = strings.ToLower(strings.TrimSpace(d))
	if h, _, ok := strings.Cut(d, ":"); ok && !strings.HasPrefix(d, "[") && strings.Count(d, ":") == 1 {
		d = h
	}
	d = strings.Trim(d, "[]")
	return d == "*" || d == "localhost" || strings.HasSuffix(d, ".localhost") || strings.HasPrefix(d, "127.") ||
		d == "::1" || d == "0.0.0.0" || d == "*.localhost" || strings.HasPrefix(d, "::ffff:127.")
}

// addPaths adds each of paths to the list at key, unless an entry that
// means the same path is there.
func addPaths(o *object, key string, paths []string, userHome string) error {
	var list []string
	if raw, ok := o.get(key); ok {
		if err := json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("sandbox.filesystem.%s is not a list of strings: %w", key, err)
		}
	}
	changed := false
	for _, p := range paths {
		want := sandboxPath(p, userHome)
		have := false
		for _, e := range list {
			have = have || settingsPath(e, userHome, "/") == settingsPath(want, userHome, "/")
		}
		if !have {
			list = append(list, want)
			changed = true
		}
	}
	if changed {
		b, _ := json.Marshal(list)
		o.set(key, b)
	}
	return nil
}

// member is the object at key of o (a new one when absent).
func member(o *object, key string) (*object, error) {
	raw, ok := o.get(key)
	if !ok {
		return &object{}, nil
	}
	m, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not an object: %w", key, err)
	}
	return m, nil
}

// putMember stores m at key of o when anything in it changed.
func putMember(o *object, key string, m *object) error {
	if _, ok := o.get(key); ok && len(m.touched) == 0 {
		return nil
	}
	b, err := m.marshal()
	if err != nil {
		return err
	}
	o.set(key, bytes.TrimSpace(b))
	return nil
}

// setValue sets key to v unless it already holds it.
func setValue(o *object, key string, v any) {
	b, _ := json.Marshal(v)
	if raw, ok := o.get(key); ok && bytes.Equal(bytes.TrimSpace(raw), b) {
		return
	}
	o.set(key, b)
}

// Confinement is whether Claude Code's sandbox confines the agent's
// shell away from evokore's approval surfaces.
type Confinement struct {
	Confined bool
	// Gaps say what is missing, when it is not confined.
	Gaps []string
	// Outside are the commands the settings run outside the sandbox
	// (excludedCommands).
	Outside []string
	// Files are the settings files read.
	Files []string
}

// SettingsFiles are Claude Code's user, project and local settings
// files, lowest precedence first.
func SettingsFiles(userHome, project string) []string {
	return []string{
		filepath.Join(userHome, ".claude", "settings.json"),
		filepath.Join(project, ".claude", "settings.json"),
		filepath.Join(project, ".claude", "settings.local.json"),
	}
}

// sandboxSettings is the part of a settings file Confine reads.
type sandboxSettings struct {
	Sandbox *struct {
		Enabled                  *bool    `json:"enabled"`
		AllowUnsandboxedCommands *bool    `json:"allowUnsandboxedCommands"`
		ExcludedCommands         []string `json:"excludedCommands"`
		Filesystem               struct {
			DenyWrite []string `json:"denyWrite"`
			DenyRead  []string `json:"denyRead"`
		} `json:"filesystem"`
		Network struct {
			AllowedDomains      []string `json:"allowedDomains"`
			AllowAllUnixSockets *bool    `json:"allowAllUnixSockets"`
		} `json:"network"`
	} `json:"sandbox"`
}

// effective is the sandbox the settings files make together: a later
// file's scalar wins, lists merge.
type effective struct {
	enabled, unsandboxed, allSockets bool
	denyWrite, denyRead, domains     []string
	excluded, files                  []string
}

// Confine reads the settings files (regular files only, within the
// config cap; lowest precedence first) and says whether the sandbox
// they turn on keeps the shell from sb's paths and from this machine's
// network.
func Confine(files []string, sb Sandbox, userHome string) Confinement {
	e := effective{unsandboxed: true}
	for _, f := range files {
		e.read(f, userHome)
	}
	c := Confinement{Outside: e.excluded, Files: e.files}
	if !e.enabled {
		c.Gaps = append(c.Gaps, "its sandbox is off (sandbox.enabled)")
		return c
	}
	if e.unsandboxed {
		c.Gaps = append(c.Gaps, "a command may ask to leave the sandbox (sandbox.allowUnsandboxedCommands is not false)")
	}
	for _, p := range sb.DenyWrite {
		if !covered(e.denyWrite, p) {
			c.Gaps = append(c.Gaps, "the shell may write "+p+" (sandbox.filesystem.denyWrite)")
		}
	}
	for _, p := range sb.DenyRead {
		if !covered(e.denyRead, p) {
			c.Gaps = append(c.Gaps, "the shell may read "+p+" (sandbox.filesystem.denyRead)")
		}
	}
	for _, d := range e.domains {
		if localDomain(d) {
			c.Gaps = append(c.Gaps, "the shell may reach "+d+", where the dashboard and approvals feed listen (sandbox.network.allowedDomains)")
		}
	}
	if e.allSockets {
		c.Gaps = append(c.Gaps, "the shell may use every Unix socket (sandbox.network.allowAllUnixSockets)")
	}
	c.Confined = len(c.Gaps) == 0
	return c
}

// read folds one settings file into e; a missing, irregular or
// unparsable file adds nothing.
func (e *effective) read(path, userHome string) {
	b, err := safefile.Load(path, safefile.MaxConfigBytes)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			e.files = append(e.files, path+" (unreadable: "+err.Error()+")")
		}
		return
	}
	e.files = append(e.files, path)
	var s sandboxSettings
	if json.Unmarshal(b, &s) != nil || s.Sandbox == nil {
		return
	}
	box := s.Sandbox
	if box.Enabled != nil {
		e.enabled = *box.Enabled
	}
	if box.AllowUnsandboxedCommands != nil {
		e.unsandboxed = *box.AllowUnsandboxedCommands
	}
	if box.Network.AllowAllUnixSockets != nil {
		e.allSockets = *box.Network.AllowAllUnixSockets
	}
	dir := filepath.Dir(path)
	for _, p := range box.Filesystem.DenyWrite {
		e.denyWrite = append(e.denyWrite, settingsPath(p, userHome, dir))
	}
	for _, p := range box.Filesystem.DenyRead {
		e.denyRead = append(e.denyRead, settingsPath(p, userHome, dir))
	}
	e.domains = append(e.domains, box.Network.AllowedDomains...)
	e.excluded = append(e.excluded, box.ExcludedCommands...)
}

// covered reports whether p is one of the denied paths or under one.
func covered(denied []string, p string) bool {
	p = filepath.Clean(p)
	for _, d := range denied {
		d = filepath.Clean(strings.TrimSuffix(strings.TrimSuffix(d, "/**"), "/*"))
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}
