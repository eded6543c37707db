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
}

// deletes are the commands that remove their arguments.
var deletes = map[string]bool{"rm": true, "rmdir": true, "unlink": true, "shred": true, "del": true, "srm": true, "trash": true, "mv": true}

// writes are the commands that change their arguments.
var writes = map[string]bool{"rm": true, "rmdir": true, "unlink": true, "shred": true, "mv": true, "tee": true, "truncate": true,
	"chmod": true, "chown": true, "chgrp": true, "ln": true, "install": true, "touch": true, "sed": true, "perl": true, "rsync": true}

func (m *matcher) bash(cmd string) []Decision {
	p := parseShell(cmd)
	var ds []Decision
	if p.tooDeep {
		ds = append(ds, Decision{Ask, "the command nests shells deeper than damage-control follows"})
	}
	for _, v := range p.views() {
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
	}
	for _, c := range p.commands() {
		if d := approvalsDecision(c.words); d.Action != Allow {
			ds = append(ds, d)
		}
		name := c.name()
		redirect := false
		for i, w := range c.words {
			if i == 0 {
				continue
			}
			if strings.HasPrefix(w, ">") || strings.HasPrefix(w, "&>") {
				redirect = strings.HasPrefix(w, ">") && !strings.HasPrefix(w, ">&")
				continue
			}
			for _, arg := range pathsIn(w) {
				writing := redirect || writes[name] || (name == "dd" && strings.HasPrefix(w, "of=")) ||
					(name == "cp" && i == len(c.words)-1)
				if name == "sed" || name == "perl" {
					writing = hasInPlace(c.words)
				}
				deleting := deletes[name] || (name == "find" && contains(c.words, "-delete"))
				if name == "git" && len(c.words) > 1 && c.words[1] == "rm" {
					deleting = true
				}
				d := m.path(arg, writing, deleting)
				if d.Action != Allow {
					ds = append(ds, d)
				}
			}
			redirect = false
		}
	}
	return ds
}

func hasInPlace(words []string) bool {
	for _, w := range words[1:] {
		if w == "-i" || strings.HasPrefix(w, "-i") || w == "--in-place" || strings.HasPrefix(w, "--in-place=") || (strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "i")) {
			return true
		}
	}
	return false
}

func contains(ws []string, s string) bool {
	for _, w := range ws {
		if w == s {
			return true
		}
	}
	return false
}

// pathsIn returns the paths a word may name: the word itself, and the
// value of an option=value or if=/of= word.
func pathsIn(w string) []string {
	if w == "" {
		return nil
	}
	out := []string{w}
	if i := strings.IndexByte(w, '='); i > 0 && i < len(w)-1 {
		out = append(out, w[i+1:])
	}
	return out
}

// path judges one path a tool touches.
func (m *matcher) path(p string, write, del bool) Decision {
	r := m.rules
	if (write || del) && m.evokoreState(p) {
		return Decision{Block, fmt.Sprintf("%s is evokore's approval, pin or trust state: only evokore and an operator at a terminal change it, never an agent's tool", p)}
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
	return Decision{Action: Allow}
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
var guardedState = []string{"approvals/", "pins.json", "trusted.json", RulesFile, "cache/"}

// evokoreState reports whether path p (as written, or through symlinks)
// is one of EVOKORE_HOME's guarded files.
func (m *matcher) evokoreState(p string) bool {
	if m.evokoreHome == "" {
		return false
	}
	p = expandEvokoreHome(p, m.evokoreHome)
	for _, home := range []string{filepath.Clean(m.evokoreHome), resolved(m.evokoreHome)} {
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

// approvalsDecision blocks a command that decides approvals: `evokore
// approvals approve|deny` however it is started (a path to the binary,
// go run, a wrapper, env assignments: the parser has peeled those), and
// an HTTP client calling the approvals routes of the dashboard or a
// router. An agent must not approve the calls that wait for its user.
func approvalsDecision(words []string) Decision {
	for i := 1; i+1 < len(words); i++ {
		if words[i] == "approvals" && (words[i+1] == "approve" || words[i+1] == "deny") {
			return Decision{Block, "'evokore approvals " + words[i+1] + "' decides a call held for the user; an agent may not run it (an operator runs it at a terminal)"}
		}
	}
	if len(words) > 0 && httpClients[words[0]] {
		for _, w := range words[1:] {
			if strings.Contains(w, "/api/approvals") || strings.Contains(w, "/ws/approvals") {
				return Decision{Block, "the approvals API decides calls held for the user; an agent may not call it"}
			}
		}
	}
	return Decision{Action: Allow}
}

// httpClients are the commands that send HTTP requests.
var httpClients = map[string]bool{"curl": true, "wget": true, "http": true, "https": true, "xh": true, "xhs": true,
	"httpie": true, "websocat": true, "wscat": true, "aria2c": true, "fetch": true, "lwp-request": true, "POST": true, "GET": true}
