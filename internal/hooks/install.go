package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aymanbagabas/go-udiff"

	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/statefile"
)

// Wiring is one hook as Claude Code's settings.json declares it.
type Wiring struct {
	Event   string
	Matcher string
	Hook    string
}

// Wirings are the hooks `evokore hooks install` declares, in order.
var Wirings = []Wiring{
	{"PreToolUse", "Bash|Edit|MultiEdit|Write|Read", DamageControl},
	{"UserPromptSubmit", "", PurposeGate},
	{"UserPromptSubmit", "", RepoAudit},
	{"PostToolUse", "", SessionReplay},
	{"PostToolUse", "Bash|Edit|MultiEdit|Write", EvidenceCapture},
	{"PostToolUse", "Edit|MultiEdit|Write", AfterEdit},
	{"PostToolUse", "Task|Agent", SubagentTracker},
	{"PreCompact", "", PreCompact},
	{"Stop", "", TillDone},
	{"Stop", "", VoiceStop},
}

// ours recognises a command evokore installed: an evokore executable
// running "hook <name>" or "status-line".
var ours = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[/\\\s"'])evokore(\.exe)?["']?\s+(hook\s+[a-z-]+|status-line)\s*$`)
})

// IsOurs reports whether a settings.json command is one evokore installs.
func IsOurs(command string) bool { return ours().MatchString(command) }

// quoteCommand quotes an executable path for the shell Claude Code runs
// hook commands with.
func quoteCommand(exe string) string {
	if exe != "" && !strings.ContainsAny(exe, " \t'\"$`\\;&|<>()*?[]{}!#~") {
		return exe
	}
	return "'" + strings.ReplaceAll(exe, "'", `'\''`) + "'"
}

// Settings edits one Claude Code settings.json.
type Settings struct {
	// Path is the settings file.
	Path string
	// Exe is the evokore executable the hooks run.
	Exe string
	// Now names the backup.
	Now func() time.Time
	// Sandbox, when set, turns on Claude Code's sandbox for the agent's
	// shell with these paths kept from it (see sandbox.go); UserHome
	// writes the paths under it as "~/…".
	Sandbox  *Sandbox
	UserHome string
}

// Change is the outcome of Install or Uninstall.
type Change struct {
	Before, After []byte
	// Changed is false when the file already said the same.
	Changed bool
	// Backup is where the previous file was copied ("" when none).
	Backup string
}

// Install plans the settings with evokore's hooks and status line merged
// in: evokore's earlier entries are replaced, every other entry is kept
// as it was, and a status line the user configured is left alone. With
// Sandbox set, Claude Code's sandbox is turned on too.
func (s Settings) Install() (*Change, error) { return s.plan(true, true) }

// Uninstall plans the settings with evokore's entries removed; the
// sandbox block is the user's and stays.
func (s Settings) Uninstall() (*Change, error) { return s.plan(false, true) }

// EnableSandbox plans only the sandbox block (connect claude-code
// --sandbox): the hooks are left as they are.
func (s Settings) EnableSandbox() (*Change, error) { return s.plan(true, false) }

func (s Settings) plan(install, hooks bool) (*Change, error) {
	before, err := safefile.Load(s.Path, safefile.MaxConfigBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	root := &object{}
	if len(bytes.TrimSpace(before)) > 0 {
		if root, err = parseObject(before); err != nil {
			return nil, fmt.Errorf("%s is not a JSON object, so it is left as it is: %w", s.Path, err)
		}
	}
	if hooks {
		if err := s.mergeHooks(root, install); err != nil {
			return nil, err
		}
		s.mergeStatusLine(root, install)
	}
	if install && s.Sandbox != nil {
		if err := mergeSandbox(root, *s.Sandbox, s.UserHome); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Path, err)
		}
	}
	after, err := root.marshal()
	if err != nil {
		return nil, err
	}
	return &Change{Before: before, After: after, Changed: !bytes.Equal(before, after)}, nil
}

// mergeHooks removes every evokore hook from root's "hooks" (dropping
// groups and events left empty) and, installing, adds the Wirings.
func (s Settings) mergeHooks(root *object, install bool) error {
	hooksObj := &object{}
	if raw, ok := root.get("hooks"); ok {
		var err error
		if hooksObj, err = parseObject(raw); err != nil {
			return fmt.Errorf("%s: \"hooks\" is not an object: %w", s.Path, err)
		}
	}
	for _, event := range append([]string(nil), hooksObj.keys...) {
		if err := s.dropOurs(hooksObj, event); err != nil {
			return err
		}
	}
	if install {
		exe := quoteCommand(s.Exe)
		for _, w := range Wirings {
			var groups []any
			if raw, ok := hooksObj.get(w.Event); ok {
				_ = json.Unmarshal(raw, &groups)
			}
			g := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": exe + " hook " + w.Hook}}}
			if w.Matcher != "" {
				g["matcher"] = w.Matcher
			}
			b, _ := json.Marshal(append(groups, g))
			hooksObj.set(w.Event, b)
		}
	}
	if len(hooksObj.keys) == 0 {
		root.del("hooks")
		return nil
	}
	b, err := hooksObj.marshal()
	if err != nil {
		return err
	}
	root.set("hooks", bytes.TrimSpace(b))
	return nil
}

// dropOurs removes evokore's hooks from one event's groups.
func (s Settings) dropOurs(hooksObj *object, event string) error {
	raw, _ := hooksObj.get(event)
	var groups []map[string]any
	if err := json.Unmarshal(raw, &groups); err != nil {
		return fmt.Errorf("%s: hooks.%s is not a list of hook groups: %w", s.Path, event, err)
	}
	kept := groups[:0]
	changed := false
	for _, g := range groups {
		list, _ := g["hooks"].([]any)
		var rest []any
		for _, h := range list {
			if m, ok := h.(map[string]any); ok {
				if c, _ := m["command"].(string); IsOurs(c) {
					changed = true
					continue
				}
			}
			rest = append(rest, h)
		}
		if len(rest) == 0 && len(list) > 0 {
			continue
		}
		if len(rest) != len(list) {
			g["hooks"] = rest
		}
		kept = append(kept, g)
	}
	switch {
	case !changed:
	case len(kept) == 0:
		hooksObj.del(event)
	default:
		b, _ := json.Marshal(kept)
		hooksObj.set(event, b)
	}
	return nil
}

// mergeStatusLine: evokore's status line replaces evokore's; a user's is
// kept.
func (s Settings) mergeStatusLine(root *object, install bool) {
	var status struct {
		Command string `json:"command"`
	}
	raw, has := root.get("statusLine")
	if has {
		_ = json.Unmarshal(raw, &status)
	}
	mine := has && IsOurs(status.Command)
	switch {
	case install && (!has || mine):
		b, _ := json.Marshal(map[string]any{"type": "command", "command": quoteCommand(s.Exe) + " status-line", "padding": 0})
		root.set("statusLine", b)
	case !install && mine:
		root.del("statusLine")
	}
}

// Apply writes a planned change, first copying the old file to
// <path>.bak-<time>. An unchanged plan writes nothing.
func (s Settings) Apply(c *Change) error {
	if !c.Changed {
		return nil
	}
	if len(c.Before) > 0 {
		now := time.Now
		if s.Now != nil {
			now = s.Now
		}
		c.Backup = s.Path + ".bak-" + now().UTC().Format("20060102T150405.000Z")
		if err := statefile.WriteAtomic(c.Backup, c.Before, 0o600); err != nil {
			return fmt.Errorf("back up %s: %w", s.Path, err)
		}
	}
	perm := fs.FileMode(0o644)
	if info, err := os.Stat(s.Path); err == nil {
		perm = info.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		return err
	}
	return statefile.WriteAtomic(s.Path, c.After, perm)
}

// object is a JSON object that keeps its keys in the order written, so
// a rewrite of settings.json moves nothing it did not change.
type object struct {
	keys []string
	vals map[string]json.RawMessage
	// touched are the keys set since parsing: the others are written
	// back as the file had them, byte for byte.
	touched map[string]bool
	// indent is the file's indentation unit ("" = two spaces).
	indent string
}

func parseObject(data []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	o := &object{vals: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.set(k, v)
	}
	o.touched = nil
	o.indent = indentOf(data)
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("text after the object")
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("text after the object")
	}
	return o, nil
}

func (o *object) get(k string) (json.RawMessage, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *object) set(k string, v json.RawMessage) {
	if o.vals == nil {
		o.vals = map[string]json.RawMessage{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	if o.touched == nil {
		o.touched = map[string]bool{}
	}
	o.touched[k] = true
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// marshal renders the object in the file's indentation (two spaces for a
// new file), with a final newline: the members it did not change as they
// were written, so a diff shows only what changed.
func (o *object) marshal() ([]byte, error) {
	unit := o.indent
	if unit == "" {
		unit = "  "
	}
	var b bytes.Buffer
	b.WriteString("{")
	for i, k := range o.keys {
		if i > 0 {
			b.WriteString(",")
		}
		kb, _ := json.Marshal(k)
		b.WriteString("\n" + unit)
		b.Write(kb)
		b.WriteString(": ")
		if !o.touched[k] {
			b.Write(o.vals[k])
			continue
		}
		var v bytes.Buffer
		if err := json.Indent(&v, o.vals[k], unit, unit); err != nil {
			return nil, err
		}
		b.Write(v.Bytes())
	}
	if len(o.keys) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// indentOf is the indentation of an object's first member when it
// starts a line of spaces or tabs; "" otherwise.
func indentOf(data []byte) string {
	open := bytes.IndexByte(data, '{')
	quote := bytes.IndexByte(data, '"')
	if open < 0 || quote < open {
		return ""
	}
	gap := data[open+1 : quote]
	nl := bytes.LastIndexByte(gap, '\n')
	if nl < 0 {
		return ""
	}
	ws := string(gap[nl+1:])
	if ws == "" || strings.Trim(ws, " \t") != "" {
		return ""
	}
	return ws
}

// Diff renders a unified diff of before and after.
func Diff(name string, before, after []byte) string {
	return udiff.Unified(name, name, string(before), string(after))
}
