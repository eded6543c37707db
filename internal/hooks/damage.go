package hooks

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/operatorkey"
	"github.com/evokore/evokore/internal/replay"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/statefile"
	"github.com/evokore/evokore/schema"
)

// ShippedRules is the damage-control rule set used when EVOKORE_HOME has
// no damage-control-rules.yaml (or has one that does not validate).
//
//go:embed damage-control-rules.yaml
var ShippedRules []byte

// RulesFile is the name of the rules under EVOKORE_HOME.
const RulesFile = "damage-control-rules.yaml"

// Decisions damage-control can reach.
const (
	Allow = "allow"
	Ask   = "ask"
	Block = "block"
)

// Decision is damage-control's verdict on one tool call.
type Decision struct {
	Action string
	Reason string
}

// LoadRules reads EVOKORE_HOME's rules, else the shipped ones. A user file
// that does not validate is reported (positioned diagnostics) and the
// shipped rules apply instead: a typo must not switch protection off.
//
// CUE evaluation costs a hook run about a tenth of a second, before every
// tool call, so a file is evaluated once per content: a marker under
// cache/ named by the SHA-256 of the schema and the file lets later runs
// decode the same bytes directly. The shipped rules are checked against
// the schema by the tests.
func LoadRules(home string) (*config.DamageControlRules, error) {
	path := filepath.Join(home, RulesFile)
	src, err := safefile.Load(path, safefile.MaxConfigBytes)
	if err == nil {
		marker := validMarker(home, src)
		if _, serr := os.Stat(marker); serr == nil {
			if r, derr := config.DecodeDamageControl(path, src); derr == nil {
				return r, nil
			}
		}
		r, ds := config.ParseDamageControl(path, src)
		if ds == nil {
			_ = statefile.WriteAtomic(marker, nil, 0o600)
			return r, nil
		}
		err = ds
	} else if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	shipped, derr := config.DecodeDamageControl("(shipped) "+RulesFile, ShippedRules)
	if derr != nil {
		// Tested; a build defect.
		return nil, errors.Join(err, derr)
	}
	return shipped, err
}

// validMarker names the marker of src having passed the schema.
func validMarker(home string, src []byte) string {
	h := sha256.New()
	def, _ := schema.FS.ReadFile("damagecontrol.cue")
	h.Write(def)
	h.Write([]byte{0})
	h.Write(src)
	return filepath.Join(home, "cache", "damage-control-"+hex.EncodeToString(h.Sum(nil))[:32]+".valid")
}

// judge is the decision of rules on a call of tool with input. home and
// cwd resolve "~" and relative paths; evokoreHome is EVOKORE_HOME, whose
// approval, pin and trust state no tool may change (see guardedState).
func judge(rules *config.DamageControlRules, tool string, input map[string]any, home, cwd, evokoreHome string) Decision {
	m := &matcher{rules: rules, home: home, cwd: cwd, evokoreHome: evokoreHome}
	var ds []Decision
	switch tool {
	case "Bash":
		cmd, _ := input["command"].(string)
		ds = m.bash(cmd)
	case "Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Glob", "Grep", "LS":
		write := tool != "Read" && tool != "Glob" && tool != "Grep" && tool != "LS"
		for _, k := range []string{"file_path", "notebook_path", "path"} {
			if p, ok := input[k].(string); ok && p != "" {
				ds = append(ds, m.path(p, write, false))
			}
		}
	}
	return worst(ds)
}

// worst is the strictest of ds: any block, else any ask, else allow.
func worst(ds []Decision) Decision {
	out := Decision{Action: Allow}
	for _, d := range ds {
		switch {
		case d.Action == Block:
			return d
		case d.Action == Ask && out.Action == Allow:
			out = d
		}
	}
	return out
}

type matcher struct {
	rules                  *config.DamageControlRules
	home, cwd, evokoreHome string
	// homes caches EVOKORE_HOME as written and with its symlinks resolved.
	homes []string
}

// evokoreHomes is EVOKORE_HOME as written and through its symlinks.
func (m *matcher) evokoreHomes() []string {
	if m.homes == nil {
		m.homes = []string{filepath.Clean(m.evokoreHome), resolved(m.evokoreHome)}
	}
	return m.homes
}

func (m *matcher) bash(cmd string) []Decision {
	p := parseShell(cmd)
	var ds []Decision
	if p.tooDeep {
		ds = append(ds, Decision{Ask, "the command nests shells deeper than damage-control follows"})
	}
	for _, why := range p.unseen {
		ds = append(ds, Decision{Ask, why})
	}
	for _, v := range p.views() {
		ds = append(ds, m.patterns(v)...)
	}
	for _, c := range p.commands() {
		if d := surfaceDecision(c); d.Action != Allow {
			ds = append(ds, d)
		}
		for _, t := range targets(c) {
			if d := m.target(t, c.dir); d.Action != Allow {
				ds = append(ds, d)
			}
		}
	}
	return ds
}

// patterns are the decisions of the rules' bashToolPatterns on a view.
func (m *matcher) patterns(v string) []Decision {
	var ds []Decision
	for i := range m.rules.BashToolPatterns {
		rule := &m.rules.BashToolPatterns[i]
		if rule.Matches(v) {
			act := Block
			if rule.Ask {
				act = Ask
			}
			ds = append(ds, Decision{act, rule.Reason})
		}
	}
	return ds
}

// target judges a path a command touches from dir, the working
// directory a cd in the line moved to ("" the hook's, unknownDir when
// unresolved).
func (m *matcher) target(t target, dir string) Decision {
	if t.unk.unknown() {
		return m.unknownTarget(t, dir)
	}
	m.evokoreHomes()
	at := *m
	if dir == unknownDir {
		if rel := t.path; !filepath.IsAbs(rel) && !strings.HasPrefix(rel, "~") && !strings.HasPrefix(rel, "$") && (t.write || t.del) {
			if d := m.path(filepath.Join(m.evokoreHome, rel), true, t.del); d.Action != Allow {
				return Decision{Ask, "after a cd to a directory damage-control cannot resolve, " + rel + " could be evokore's state"}
			}
		}
	} else if dir != "" {
		at.cwd = absolute(expandEvokoreHome(expandHome(dir, m.home), m.evokoreHome), m.cwd)
	}
	if t.dir {
		return at.directory(t.path)
	}
	return at.path(t.path, t.write, t.del)
}

// unknownTarget judges a path with a part damage-control cannot resolve:
// a write or delete asks when the path could be under EVOKORE_HOME.
func (m *matcher) unknownTarget(t target, dir string) Decision {
	if !(t.write || t.del || t.dir) || m.evokoreHome == "" {
		return Decision{Action: Allow}
	}
	what := t.path[t.unk.from:t.unk.to]
	prefix, tail := t.path[:t.unk.from], t.path[t.unk.to:]
	reach := false
	switch {
	case prefix == "":
		reach = tail == "" || m.evokoreState(filepath.Join(m.evokoreHome, tail))
	default:
		base := prefix
		if !strings.HasSuffix(base, "/") {
			base = filepath.Dir(base)
		}
		base = absolute(expandEvokoreHome(expandHome(base, m.home), m.evokoreHome), m.cwd)
		reach = m.underOrAbove(base)
	}
	if !reach {
		return Decision{Action: Allow}
	}
	return Decision{Ask, "a path built from " + what + ", which damage-control cannot resolve, is written: it could be evokore's approval state"}
}

// underOrAbove reports whether dir is EVOKORE_HOME, inside it (outside
// the folders agents may write) or one of its parents.
func (m *matcher) underOrAbove(dir string) bool {
	home := filepath.Clean(m.evokoreHome)
	dir = filepath.Clean(dir)
	return m.inEvokoreHome(dir) || dir == home || strings.HasPrefix(home, strings.TrimSuffix(dir, "/")+"/")
}

// directory judges a directory a command writes files into that the
// line does not name: inside EVOKORE_HOME it blocks, above it it asks.
func (m *matcher) directory(p string) Decision {
	if m.evokoreHome == "" {
		return m.path(p, true, false)
	}
	abs := absolute(expandEvokoreHome(expandHome(p, m.home), m.evokoreHome), m.cwd)
	for _, home := range m.evokoreHomes() {
		if home == "" {
			continue
		}
		for _, d := range []string{abs, resolved(abs)} {
			switch {
			case d == "":
			case d == home || m.evokoreState(d) || m.inEvokoreHome(d):
				return Decision{Block, p + " is evokore's state directory: what is unpacked or applied there could change approvals, pins or trust"}
			case strings.HasPrefix(home, strings.TrimSuffix(d, "/")+"/"):
				return Decision{Ask, p + " holds EVOKORE_HOME: what is unpacked or applied there could change evokore's approvals, pins or trust"}
			}
		}
	}
	return m.path(p, true, false)
}

// path judges one path a tool touches.
func (m *matcher) path(p string, write, del bool) Decision {
	r := m.rules
	if (write || del) && m.evokoreState(p) {
		return Decision{Block, fmt.Sprintf("%s is evokore's approval, pin or trust state: only evokore and an operator at a terminal change it, never an agent's tool", p)}
	}
	if (write || del) && m.inEvokoreHome(p) {
		return Decision{Ask, fmt.Sprintf("%s is under EVOKORE_HOME, where evokore keeps what decides approvals", p)}
	}
	if m.any(r.ZeroAccessPaths, p, true) && !m.any(r.ZeroAccessExceptions, p, false) {
		return Decision{Block, fmt.Sprintf("%s is a zero-access path: no tool may read or write it", p)}
	}
	if write && m.any(r.ReadOnlyPaths, p, true) {
		return Decision{Block, fmt.Sprintf("%s is read-only: it may be read but not changed", p)}
	}
	if del && m.any(r.NoDeletePaths, p, true) {
		return Decision{Block, fmt.Sprintf("%s may not be deleted", p)}
	}
	if write && claudeSettings(p) {
		return Decision{Ask, fmt.Sprintf("%s is Claude Code's settings: it decides the hooks and the sandbox that confine the agent", p)}
	}
	return Decision{Action: Allow}
}

// claudeSettings reports a Claude Code settings file (.claude/settings.json
// or settings.local.json).
func claudeSettings(p string) bool {
	base := filepath.Base(p)
	return (base == "settings.json" || base == "settings.local.json") && filepath.Base(filepath.Dir(p)) == ".claude"
}

// any reports whether p falls under one of patterns; with globs, a path
// that is itself a glob counts when it could expand into one (for
// protection, never for exceptions).
func (m *matcher) any(patterns []string, p string, globs bool) bool {
	for _, pat := range patterns {
		if matchPath(pat, p, m.home, m.cwd, globs) {
			return true
		}
	}
	return false
}

// expandHome turns a leading ~, $HOME or ${HOME} into home.
func expandHome(p, home string) string {
	for _, pre := range []string{"~", "$HOME", "${HOME}"} {
		if p == pre {
			return home
		}
		if strings.HasPrefix(p, pre+"/") && home != "" {
			return home + p[len(pre):]
		}
	}
	return p
}

// matchPath reports whether path p falls under pattern pat: a trailing
// "/" names a directory (absolute, or anywhere in the path when
// relative); a pattern with another "/" is a file path; one without is
// matched against the file's name. A path that is itself a glob (cat
// .en*) matches a name pattern it could expand to.
func matchPath(pat, p, home, cwd string, globs bool) bool {
	pat = expandHome(pat, home)
	p = expandHome(p, home)
	abs := p
	if !filepath.IsAbs(abs) && cwd != "" {
		abs = filepath.Join(cwd, abs)
	}
	abs = filepath.Clean(abs)
	rel := filepath.Clean(p)
	if dir, ok := strings.CutSuffix(pat, "/"); ok {
		if filepath.IsAbs(dir) {
			dir = filepath.Clean(dir)
			return abs == dir || strings.HasPrefix(abs, dir+"/") || (globs && globUnder(abs, dir))
		}
		return strings.Contains("/"+abs+"/", "/"+dir+"/") || strings.Contains("/"+rel+"/", "/"+dir+"/") || (globs && globUnder(abs, filepath.Join(home, dir)))
	}
	if strings.Contains(pat, "/") {
		if filepath.IsAbs(pat) {
			ok, _ := filepath.Match(pat, abs)
			return ok || abs == filepath.Clean(pat)
		}
		return strings.HasSuffix("/"+abs, "/"+pat) || strings.HasSuffix("/"+rel, "/"+pat)
	}
	base := filepath.Base(abs)
	if ok, _ := filepath.Match(pat, base); ok {
		return true
	}
	if globs && strings.ContainsAny(base, "*?[") && !strings.ContainsAny(pat, "*?[") {
		ok, _ := filepath.Match(base, pat)
		return ok
	}
	return false
}

// globUnder reports whether a glob path such as /et*/passwd could expand
// into dir.
func globUnder(abs, dir string) bool {
	if !strings.ContainsAny(abs, "*?[") {
		return false
	}
	parts := strings.Split(abs, "/")
	dparts := strings.Split(dir, "/")
	if len(parts) < len(dparts) {
		return false
	}
	for i, d := range dparts {
		if ok, _ := filepath.Match(parts[i], d); !ok {
			return false
		}
	}
	return true
}

// damageControl is the PreToolUse hook.
func damageControl(r *run) (int, error) {
	rules, err := LoadRules(r.Home)
	if rules == nil {
		return ExitOK, err
	}
	if err != nil {
		_ = r.log("rules_invalid", map[string]any{"error": err.Error()})
	}
	home, _ := os.UserHomeDir()
	if h := r.getenv("HOME"); h != "" {
		home = h
	}
	d := judge(rules, r.p.ToolName, r.p.ToolInput, home, r.cwd(), r.Home)
	if d.Action == Allow {
		return ExitOK, nil
	}
	what := replay.Truncate(replay.Summarize(r.p.ToolInput), replay.MaxSummary)
	_ = r.log("decision", map[string]any{"decision": d.Action, "tool": r.p.ToolName, "reason": d.Reason, "summary": what})
	_ = appendText(filepath.Join(r.Home, "logs", "damage-control.log"),
		fmt.Sprintf("%s %s %s %q: %s", replay.Timestamp(r.now), strings.ToUpper(d.Action), r.p.ToolName, what, d.Reason))
	if d.Action == Block {
		fmt.Fprintf(r.Stderr, "Blocked by evokore damage-control: %s\n", d.Reason)
		return ExitBlock, nil
	}
	return ExitOK, r.writeJSON(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "ask",
		"permissionDecisionReason": "evokore damage-control: " + d.Reason,
	}})
}

// appendText appends one line to a text log, rotating it like hooks.jsonl.
func appendText(path, line string) error {
	return replay.AppendRotating(path, []byte(strings.ReplaceAll(line, "\n", " ")), replay.LogMaxBytes, replay.LogKeep)
}

// guardedState are the files under EVOKORE_HOME that decide what runs:
// approvals (pending calls and the operators' decisions), tool pins, the
// trusted projects, and damage-control's own rules. These guards are
// built in, not rules: a user's rules file replaces the shipped one whole
// and must not drop them. A trailing "/" names a directory.
var guardedState = []string{"approvals/", "pins.json", "trusted.json", RulesFile, "cache/", "permissions.yml", "mcp.config.json", operatorkey.Dir + "/"}

// agentWritable are the folders of EVOKORE_HOME an agent's tools write:
// the session records (an agent keeps its task list there) and logs.
var agentWritable = []string{"sessions/", "logs/"}

// inEvokoreHome reports whether p (as written, or through symlinks) is
// under EVOKORE_HOME outside the folders agents write.
func (m *matcher) inEvokoreHome(p string) bool {
	if m.evokoreHome == "" {
		return false
	}
	p = expandEvokoreHome(p, m.evokoreHome)
	abs := absolute(expandHome(p, m.home), m.cwd)
	for _, home := range m.evokoreHomes() {
		if !filepath.IsAbs(home) {
			continue
		}
		for _, q := range []string{abs, resolved(abs)} {
			if q == "" || !strings.HasPrefix(q, home+"/") {
				continue
			}
			rel := strings.TrimPrefix(q, home+"/")
			free := false
			for _, a := range agentWritable {
				free = free || strings.HasPrefix(rel+"/", a)
			}
			if !free {
				return true
			}
		}
	}
	return false
}

// evokoreState reports whether path p (as written, or through symlinks)
// is one of EVOKORE_HOME's guarded files.
func (m *matcher) evokoreState(p string) bool {
	if m.evokoreHome == "" {
		return false
	}
	p = expandEvokoreHome(p, m.evokoreHome)
	for _, home := range m.evokoreHomes() {
		if !filepath.IsAbs(home) {
			continue
		}
		for _, g := range guardedState {
			pat := filepath.Join(home, g)
			if strings.HasSuffix(g, "/") {
				pat += "/"
			}
			if matchPath(pat, p, m.home, m.cwd, true) {
				return true
			}
			if r := resolved(absolute(expandHome(p, m.home), m.cwd)); r != "" && matchPath(pat, r, m.home, m.cwd, false) {
				return true
			}
		}
	}
	return false
}

// expandEvokoreHome turns a leading $EVOKORE_HOME or ${EVOKORE_HOME} into
// home.
func expandEvokoreHome(p, home string) string {
	for _, pre := range []string{"$EVOKORE_HOME", "${EVOKORE_HOME}"} {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return home + p[len(pre):]
		}
	}
	return p
}

func absolute(p, cwd string) string {
	if !filepath.IsAbs(p) && cwd != "" {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// resolved is p with the symlinks of its longest existing prefix
// resolved, so a link into EVOKORE_HOME is judged as its target.
func resolved(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for range 64 {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
	return ""
}
