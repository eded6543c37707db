package hooks

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Wrappers are commands that run another command: peeled off, the
// command they run is what is judged. Some hand it code as text (sh -c,
// eval, su -c, ssh, watch, expect, socat EXEC:, tmux), which is parsed
// one level deeper; some give it a pseudo-terminal (script, unbuffer,
// expect, socat …,pty), which matters to evokore's approvals, whose
// confirmation wants a terminal; some add arguments the line does not
// show (xargs, find -exec, parallel).

// wrapper says how to peel one wrapper: its options that take a value,
// how many operands come before the command it runs, and what it gives
// that command.
type wrapper struct {
	valued   string
	operands int
	pty, fed bool
}

var wrappers = map[string]wrapper{
	"sudo": {valued: "ugCDhpUrtT"}, "doas": {valued: "uC"}, "pkexec": {}, "command": {}, "builtin": {}, "exec": {valued: "a"},
	"nohup": {}, "time": {valued: "fo"}, "nice": {valued: "n"}, "ionice": {valued: "cnp"}, "stdbuf": {valued: "ioe"},
	"timeout": {valued: "sk", operands: 1}, "env": {valued: "uCP"}, "busybox": {}, "chronic": {}, "setsid": {},
	"caffeinate": {}, "torsocks": {}, "proxychains": {}, "proxychains4": {}, "strace": {valued: "eopsSEIu"}, "ltrace": {valued: "eopsSu"},
	"chroot": {operands: 1}, "taskset": {operands: 1}, "faketime": {operands: 1}, "flock": {operands: 1}, "firejail": {},
	"unshare": {}, "nsenter": {valued: "tSGw"}, "systemd-run": {valued: "pEu"}, "catchsegv": {},
	"xargs": {valued: "EeIiLlnPsda", fed: true}, "parallel": {valued: "jS", fed: true},
	"unbuffer": {pty: true}, "rlwrap": {pty: true}, "spawn": {pty: true}, "winpty": {pty: true},
}

// shells run a command line given with -c, else their stdin.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
	"yash": true, "fish": true, "rbash": true}

// stdinShells run their stdin as a command line, later or now.
var stdinShells = map[string]bool{"at": true, "batch": true}

var assignment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`) })

// drop returns c without its first n words.
func (c shellCommand) drop(n int) shellCommand {
	c.words, c.unk = c.words[n:], c.unk[n:]
	return c
}

// unwrap peels wrappers off a simple command; the last command it
// returns is the one that runs, any before it (find, running -exec)
// run too. Code handed over as text is walked on the way.
func (w *walker) unwrap(c shellCommand) []shellCommand {
	var out []shellCommand
	for range 16 {
		for len(c.words) > 0 && assignment().MatchString(c.words[0]) {
			c = c.drop(1)
		}
		if len(c.words) == 0 {
			break
		}
		if n := c.words[0]; strings.Contains(n, "/") && !strings.HasSuffix(n, "/") && !c.unk[0].unknown() {
			c.words = append([]string{filepath.Base(n)}, c.words[1:]...)
		}
		next, also, ok := w.peel(c)
		out = append(out, also...)
		if !ok {
			break
		}
		c = next
	}
	return append(out, c)
}

// peel takes one wrapper off c: ok reports whether there was one.
func (w *walker) peel(c shellCommand) (shellCommand, []shellCommand, bool) {
	name := c.words[0]
	switch {
	case c.unk[0].unknown():
		return c, nil, false
	case name == "eval":
		w.code(c, c.words[1:], c.unk[1:], nil, "the code eval runs")
		return c, nil, false
	case name == "trap" && len(c.words) > 2:
		w.code(c, c.words[1:2], c.unk[1:2], nil, "the code trap runs")
		return c, nil, false
	case shells[name]:
		w.shell(c)
		return c, nil, false
	case stdinShells[name]:
		w.stdinCode(c, "sh")
		return c, nil, false
	case interpreterLang(c.words) != "":
		w.interpreter(c)
		return c, nil, false
	case name == "find":
		if rest, ok := findExec(c); ok {
			return rest, []shellCommand{c}, true
		}
		return c, nil, false
	}
	if textRunner(name) {
		return w.textRun(c)
	}
	return peelWrapper(c)
}

// peelWrapper takes an argv wrapper (sudo, env, xargs, …) off c.
func peelWrapper(c shellCommand) (shellCommand, []shellCommand, bool) {
	name := c.words[0]
	spec, ok := wrappers[name]
	if !ok {
		return c, nil, false
	}
	i := 1
	for i < len(c.words) {
		a := c.words[i]
		if a == "--" {
			i++
			break
		}
		if name == "env" && assignment().MatchString(a) {
			i++
			continue
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		i++
		if len(a) == 2 && strings.ContainsRune(spec.valued, rune(a[1])) && i < len(c.words) {
			i++
		}
	}
	// Operands before the command: timeout's duration, chroot's root;
	// nice and timeout take a bare number first too.
	for n := spec.operands; n > 0 && i < len(c.words)-1; n-- {
		i++
	}
	if i >= len(c.words) {
		// Nothing left to run: xargs alone runs echo.
		return c, nil, false
	}
	rest := c.drop(i)
	rest.pty = rest.pty || spec.pty
	rest.fed = rest.fed || spec.fed
	return rest, nil, true
}

// findExec returns the command find runs with -exec, -execdir, -ok or
// -okdir, with the found files as arguments the line does not show.
func findExec(c shellCommand) (shellCommand, bool) {
	for i, a := range c.words {
		if a != "-exec" && a != "-execdir" && a != "-ok" && a != "-okdir" {
			continue
		}
		end := i + 1
		for end < len(c.words) && c.words[end] != ";" && c.words[end] != "+" {
			end++
		}
		if end == i+1 {
			return c, false
		}
		rest := c
		rest.words, rest.unk = c.words[i+1:end], c.unk[i+1:end]
		rest.fed = true
		return rest, true
	}
	return c, false
}

// shell walks the code a shell runs: -c's argument (with the words after
// it as $0, $1, …), else its stdin when the line shows it.
func (w *walker) shell(c shellCommand) {
	i, withC := 1, false
	for ; i < len(c.words); i++ {
		a := c.words[i]
		if a == "--" || a == "-" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			break
		}
		if a == "-o" || a == "-O" || a == "+o" || a == "+O" || a == "--rcfile" || a == "--init-file" {
			i++
			continue
		}
		if !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'c') {
			withC = true
		}
	}
	switch {
	case withC && i < len(c.words):
		args := append([]string(nil), c.words[i+1:]...)
		if len(args) == 0 {
			args = []string{c.words[0]}
		}
		w.code(c, c.words[i:i+1], c.unk[i:i+1], args, "the code "+c.words[0]+" -c runs")
	case withC && c.fed:
		w.p.unseen = append(w.p.unseen, c.words[0]+" -c runs code that xargs supplies, which damage-control cannot see")
	case i >= len(c.words):
		w.stdinCode(c, "sh")
	}
}

// code walks words handed to a shell as one command line. A word built
// from values damage-control cannot resolve could be any code: that is
// reported, and the text is still judged as far as it reads.
func (w *walker) code(c shellCommand, words []string, unk []span, args []string, what string) {
	for i, u := range unk {
		if u.unknown() {
			w.p.unseen = append(w.p.unseen, what+" is built from "+words[i][u.from:u.to]+", which damage-control cannot resolve")
			break
		}
	}
	child := w.child(args)
	child.pty = child.pty || c.pty
	child.script(strings.Join(words, " "), what)
}

// stdinCode walks the text a command reads as code, when the line shows
// it (a heredoc, a herestring, echo … |).
func (w *walker) stdinCode(c shellCommand, lang string) {
	if !c.hasStdin {
		return
	}
	if lang == "sh" {
		child := w.child(nil)
		child.pty = child.pty || c.pty
		child.script(c.stdin, "the code "+c.words[0]+" reads")
		return
	}
	w.effects(readCode(lang, c.stdin), c.pty)
}

// textRunner reports whether name runs code given as text arguments.
func textRunner(name string) bool {
	switch name {
	case "script", "su", "runuser", "ssh", "watch", "expect", "socat", "tmux", "screen":
		return true
	}
	return false
}

// textRun walks the code a text runner is given and peels it when the
// rest of its words are a command.
func (w *walker) textRun(c shellCommand) (shellCommand, []shellCommand, bool) {
	name := c.words[0]
	c.words = append([]string(nil), c.words...) // optionValue cuts --command=
	c.unk = append([]span(nil), c.unk...)
	switch name {
	case "script":
		if code, ok := optionValue(c, "c", "--command"); ok {
			c.pty = true
			w.code(c, c.words[code:code+1], c.unk[code:code+1], nil, "the code script -c runs")
			return c, nil, false
		}
		// BSD script: script [-q] FILE COMMAND…
		if i := firstOperand(c, ""); i >= 0 && i+1 < len(c.words) {
			rest := c.drop(i + 1)
			rest.pty = true
			return rest, nil, true
		}
	case "su", "runuser":
		if code, ok := optionValue(c, "c", "--command"); ok {
			w.code(c, c.words[code:code+1], c.unk[code:code+1], nil, "the code "+name+" -c runs")
		}
	case "ssh":
		if i := firstOperand(c, "BbcDEeFIiJLlmOoPpQRSWw"); i >= 0 && i+1 < len(c.words) {
			c.pty = c.pty || hasOption(c.words[1:i], "t", "")
			w.code(c, c.words[i+1:], c.unk[i+1:], nil, "the code ssh runs")
		}
	case "watch":
		if i := firstOperand(c, "nqgd"); i >= 0 {
			w.code(c, c.words[i:], c.unk[i:], nil, "the code watch runs")
		}
	case "expect":
		w.expect(c)
	default: // socat, tmux, screen
		w.terminalText(c)
	}
	return c, nil, false
}

// checkUnknown reports a code word damage-control cannot resolve.
func (w *walker) checkUnknown(c shellCommand, i int, what string) {
	if u := c.unk[i]; u.unknown() {
		w.p.unseen = append(w.p.unseen, what+" is built from "+c.words[i][u.from:u.to]+", which damage-control cannot resolve")
	}
}

// optionValue finds a code option (-c CODE, -cCODE is not used by these
// commands, --command CODE or --command=CODE) and returns the index of
// its value.
func optionValue(c shellCommand, short, long string) (int, bool) {
	for i := 1; i < len(c.words); i++ {
		a := c.words[i]
		if a == "--" {
			return 0, false
		}
		if v, ok := strings.CutPrefix(a, long+"="); ok && long != "" {
			c.words[i] = v
			c.unk[i] = shift(c.unk[i], len(long)+1)
			return i, true
		}
		if (a == long && long != "") || (len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.HasSuffix(a, short)) {
			if i+1 < len(c.words) {
				return i + 1, true
			}
		}
	}
	return 0, false
}

// firstOperand is the index of the first word that is not an option
// (valued lists the options that take a value), -1 when none.
func firstOperand(c shellCommand, valued string) int {
	for i := 1; i < len(c.words); i++ {
		a := c.words[i]
		if a == "--" {
			if i+1 < len(c.words) {
				return i + 1
			}
			return -1
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return i
		}
		if len(a) == 2 && strings.ContainsRune(valued, rune(a[1])) {
			i++
		}
	}
	return -1
}

// expect runs Tcl; its spawn lines read as shell commands closely
// enough, and everything spawned has a pseudo-terminal.
func (w *walker) expect(c shellCommand) {
	c.pty = true
	if i, ok := optionValue(c, "c", ""); ok {
		w.tcl(c.words[i], c.unk[i].unknown())
		return
	}
	if c.hasStdin {
		w.tcl(c.stdin, false)
	}
}

// tcl walks Tcl code as shell code with a terminal; Tcl's braces and
// brackets are read as quotes, and what still does not parse asks.
func (w *walker) tcl(code string, unknown bool) {
	if unknown {
		w.p.unseen = append(w.p.unseen, "the code expect runs cannot be resolved")
	}
	child := w.child(nil)
	child.pty = true
	code = strings.NewReplacer("{", " ", "}", " ", "[", "$(", "]", ")").Replace(code)
	child.script(code, "the code expect runs")
}

// socatCommand finds the command of a socat EXEC: or SYSTEM: address.
var socatCommand = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(exec|system):(.*?)(,([a-z-]+(=[^,]*)?(,|$))*)$`)
})

// terminalText walks the command lines socat, tmux and screen are given
// as arguments: socat's EXEC:/SYSTEM: addresses, and any argument of
// tmux or screen (new-session's command, send-keys' text, stuff).
func (w *walker) terminalText(c shellCommand) {
	for i, a := range c.words[1:] {
		text := a
		if c.words[0] == "socat" {
			m := socatCommand().FindStringSubmatch(a)
			if m == nil {
				continue
			}
			text = m[2]
		} else if strings.HasPrefix(a, "-") {
			continue
		}
		w.checkUnknown(c, i+1, "the text "+c.words[0]+" runs")
		child := w.child(nil)
		child.pty = true
		quiet := &parsed{}
		child.p = quiet
		child.script(text, "")
		w.p.pipelines = append(w.p.pipelines, quiet.pipelines...)
		w.p.tooDeep = w.p.tooDeep || quiet.tooDeep
	}
}

// interpreter walks the code of an interpreter one-liner (python -c,
// node -e, …) or the code it reads on stdin.
func (w *walker) interpreter(c shellCommand) {
	lang := interpreterLang(c.words)
	orig := c.words
	c.words = append([]string(nil), c.words...) // inlineCode cuts -cCODE
	idx := inlineCode(c.words, lang)
	c.unk = append([]span(nil), c.unk...)
	for _, i := range idx {
		c.unk[i] = shift(c.unk[i], len(orig[i])-len(c.words[i]))
	}
	if len(idx) == 0 {
		if firstOperand(c, "WXIMmrdc") < 0 || c.words[len(c.words)-1] == "-" {
			w.stdinCode(c, lang)
		}
		return
	}
	var code []string
	for _, i := range idx {
		code = append(code, c.words[i])
		w.checkUnknown(c, i, "the code "+c.words[0]+" runs")
	}
	w.effects(readCode(lang, strings.Join(code, "\n")), c.pty)
}

// effects records what interpreter code does: command lines are walked
// as shell, other operations judged as the command that does the same.
func (w *walker) effects(es []effect, pty bool) {
	for _, e := range es {
		child := w.child(nil)
		child.pty = pty || e.pty
		if e.line != "" {
			child.script(e.line, "the command line the code runs")
			continue
		}
		if len(e.words) == 0 {
			continue
		}
		c := shellCommand{words: e.words, unk: e.unk, dir: w.dir, pty: child.pty}
		w.p.pipelines = append(w.p.pipelines, child.unwrap(c))
	}
}
