package hooks

import (
	"encoding/base64"
	"regexp"
	"strings"
	"sync"
)

// Interpreter one-liners (python -c, node -e, perl -e, ruby -e, php -r)
// run code that is not shell. Their code is split into tokens (names,
// strings, punctuation) and read for the calls that matter: each is
// turned into the shell command that does the same, judged by the same
// rules and path lists as any other: shutil.rmtree('/') as `rm -rf /`,
// os.system("…") as the command line it runs, open(p, 'w') as a write
// to p. An argument that is not a literal (a variable, a computed path)
// becomes a placeholder, which is unknown: a recursive delete of an
// unknown path asks, a command run from a variable asks.
//
// This is a reading of the common spellings, not an interpreter: code
// that hides its operations (getattr with computed names, a script file)
// is not seen. docs/security.md says so.

// maxCodeDepth bounds eval-of-eval in interpreter code.
const maxCodeDepth = 4

// effect is one thing interpreter code does: a command line it runs, or
// an operation as the command that does the same.
type effect struct {
	line  string
	words []string
	unk   []span
	pty   bool
}

var pythonName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(python|pypy)[0-9.]*$`) })

// interpreterLang is the language of an interpreter command, "" for any
// other command.
func interpreterLang(words []string) string {
	switch name := words[0]; {
	case pythonName().MatchString(name):
		return "python"
	case name == "node" || name == "nodejs" || name == "bun" || name == "deno":
		return "js"
	case name == "perl" || name == "ruby" || name == "php":
		return name
	}
	return ""
}

// codeOptions are, per language, the short options that take code, the
// long ones, and the short options that take another value.
var codeOptions = map[string][3]string{
	"python": {"c", "", "WXQ"},
	"js":     {"ep", "--eval --print", "r"},
	"perl":   {"eE", "", "IMmx"},
	"ruby":   {"e", "", "IrCEF"},
	"php":    {"r", "", "dcz"},
}

// inlineCode returns the indices of the words that hold an interpreter's
// inline code: a short option's value (next, or attached: the word is
// then cut to the value), a long one's, or deno eval's argument.
// Scanning stops at the first operand (a script file).
func inlineCode(words []string, lang string) []int {
	if words[0] == "deno" {
		if len(words) > 2 && words[1] == "eval" {
			return []int{len(words) - 1}
		}
		return nil
	}
	opts := codeOptions[lang]
	var out []int
	for i := 1; i < len(words); i++ {
		w := words[i]
		if w == "--" || !strings.HasPrefix(w, "-") || w == "-" {
			break
		}
		if strings.HasPrefix(w, "--") {
			for _, l := range strings.Fields(opts[1]) {
				if w == l && i+1 < len(words) {
					out = append(out, i+1)
					i++
				} else if v, ok := strings.CutPrefix(w, l+"="); ok {
					words[i] = v
					out = append(out, i)
				}
			}
			continue
		}
		i, out = shortCode(words, i, opts, out)
	}
	return out
}

// shortCode reads one cluster of short options at words[i].
func shortCode(words []string, i int, opts [3]string, out []int) (int, []int) {
	w := words[i]
	for j := 1; j < len(w); j++ {
		switch {
		case strings.IndexByte(opts[0], w[j]) >= 0 && j+1 < len(w):
			words[i] = w[j+1:]
			return i, append(out, i)
		case strings.IndexByte(opts[0], w[j]) >= 0 && i+1 < len(words):
			return i + 1, append(out, i+1)
		case strings.IndexByte(opts[2], w[j]) >= 0:
			if j+1 == len(w) {
				return i + 1, out
			}
			return i, out
		}
	}
	return i, out
}

// operation is one kind of thing interpreter code does that the shell
// rules know how to judge.
type operation int

const (
	opShell     operation = iota // runs its first argument as a command line
	opArgv                       // runs its arguments (or a list) as a command
	opEval                       // runs its first argument as code of the same language
	opRemove                     // deletes its first argument
	opRemoveAll                  // deletes its first argument recursively
	opWrite                      // writes its first argument
	opWriteMode                  // writes its first argument when the mode says so, else reads it
	opWriteLast                  // writes its last argument (copy, move)
	opMove                       // moves its first argument to its second
	opTerminal                   // runs its arguments on a pseudo-terminal
)

// calls maps, per language, the call names (as written, with the last
// dotted part matched) to what they do.
var calls = map[string]map[string]operation{
	"python": {
		"os.system": opShell, "os.popen": opShell, "subprocess.getoutput": opShell, "subprocess.getstatusoutput": opShell,
		"subprocess.run": opArgv, "subprocess.call": opArgv, "subprocess.check_call": opArgv, "subprocess.check_output": opArgv,
		"subprocess.Popen": opArgv, "os.execv": opArgv, "os.execvp": opArgv, "os.execl": opArgv, "os.execlp": opArgv,
		"os.spawnv": opArgv, "os.spawnvp": opArgv, "os.spawnl": opArgv, "os.spawnlp": opArgv,
		"pty.spawn": opTerminal, "pexpect.spawn": opTerminal, "pexpect.run": opTerminal,
		"exec": opEval, "eval": opEval, "compile": opEval,
		"shutil.rmtree": opRemoveAll, "rmtree": opRemoveAll,
		"os.remove": opRemove, "os.unlink": opRemove, "os.rmdir": opRemove, "os.removedirs": opRemoveAll,
		"open": opWriteMode, "io.open": opWriteMode, "os.open": opWriteMode, "os.truncate": opWrite,
		"shutil.copy": opWriteLast, "shutil.copy2": opWriteLast, "shutil.copyfile": opWriteLast, "shutil.copytree": opWriteLast,
		"shutil.move": opMove, "os.rename": opMove, "os.replace": opMove,
		"unlink": opRemove, "rmdir": opRemove, "write_text": opWrite, "write_bytes": opWrite, "touch": opWrite,
	},
	"js": {
		"execSync": opShell, "exec": opShell,
		"execFileSync": opArgv, "execFile": opArgv, "spawnSync": opArgv, "spawn": opArgv, "pty.spawn": opTerminal,
		"eval": opEval, "Function": opEval,
		"rmSync": opRemoveAll, "rm": opRemoveAll, "rmdirSync": opRemoveAll, "rmdir": opRemoveAll, "rimraf": opRemoveAll,
		"unlinkSync": opRemove, "unlink": opRemove,
		"writeFileSync": opWrite, "writeFile": opWrite, "appendFileSync": opWrite, "appendFile": opWrite,
		"createWriteStream": opWrite, "truncateSync": opWrite, "openSync": opWriteMode,
		"copyFileSync": opWriteLast, "copyFile": opWriteLast, "cpSync": opWriteLast,
		"renameSync": opMove, "rename": opMove,
	},
	"perl": {
		"system": opArgv, "exec": opArgv, "eval": opEval, "IO::Pty": opTerminal,
		"rmtree": opRemoveAll, "remove_tree": opRemoveAll, "unlink": opRemove, "rmdir": opRemove,
		"open": opWriteMode, "sysopen": opWriteMode, "truncate": opWrite,
		"copy": opWriteLast, "move": opMove, "rename": opMove,
	},
	"ruby": {
		"system": opArgv, "exec": opArgv, "spawn": opArgv, "IO.popen": opShell, "PTY.spawn": opTerminal,
		"Open3.capture2": opArgv, "Open3.capture2e": opArgv, "Open3.capture3": opArgv, "Open3.popen3": opArgv,
		"eval": opEval, "instance_eval": opEval,
		"FileUtils.rm_rf": opRemoveAll, "FileUtils.rm_r": opRemoveAll, "FileUtils.remove_dir": opRemoveAll,
		"FileUtils.remove_entry": opRemoveAll, "FileUtils.remove_entry_secure": opRemoveAll, "rm_rf": opRemoveAll,
		"FileUtils.rm": opRemove, "FileUtils.rm_f": opRemove, "File.delete": opRemove, "File.unlink": opRemove, "Dir.rmdir": opRemove,
		"File.write": opWrite, "IO.write": opWrite, "File.open": opWriteMode, "File.new": opWriteMode, "File.truncate": opWrite,
		"FileUtils.cp": opWriteLast, "FileUtils.cp_r": opWriteLast, "FileUtils.copy": opWriteLast,
		"FileUtils.mv": opMove, "File.rename": opMove,
	},
	"php": {
		"system": opShell, "exec": opShell, "shell_exec": opShell, "passthru": opShell, "popen": opShell, "proc_open": opShell,
		"eval":   opEval,
		"unlink": opRemove, "rmdir": opRemove,
		"file_put_contents": opWrite, "fopen": opWriteMode, "copy": opWriteLast, "rename": opMove,
	},
}

// readCode returns what code does, as far as damage-control judges it.
func readCode(lang, code string) []effect {
	r := &reader{lang: lang}
	r.read(code, 0)
	return r.out
}

// reader reads one language's code.
type reader struct {
	lang string
	out  []effect
}

func (r *reader) read(code string, depth int) {
	if depth > maxCodeDepth || len(code) > 1<<16 {
		return
	}
	ts := tokenize(code, r.lang)
	for i, t := range ts {
		switch {
		case t.kind == tokCommand && t.ok:
			r.out = append(r.out, effect{line: t.val})
		case t.kind == tokCommand:
			r.out = append(r.out, effect{words: []string{"$(" + t.text + ")"}, unk: []span{{0, 1}}})
		case t.kind == tokName:
			r.call(ts, i, depth)
		}
	}
}

// call reads the call at ts[i] when it is one the table knows.
func (r *reader) call(ts []token, i, depth int) {
	op, ok := lookup(calls[r.lang], ts[i].text, ts[i].method)
	if !ok {
		return
	}
	args := callArgs(ts, i+1, r.lang == "perl" || r.lang == "ruby")
	if len(args) == 0 {
		// pathlib: Path('/x').unlink() acts on the path it is called on.
		if r.lang == "python" && ts[i].method && (op == opRemove || op == opWrite) {
			if p, ok := pathlibReceiver(ts, i); ok {
				r.pathOp(op, [][]token{p})
			}
		}
		return
	}
	name := ts[i].text
	switch op {
	case opShell:
		r.out = append(r.out, r.line(args[0], name))
	case opArgv, opTerminal:
		e := r.argv(args, name)
		e.pty = op == opTerminal
		r.out = append(r.out, e)
	case opEval:
		if s, ok := r.value(args[0]); ok {
			r.read(s, depth+1)
		} else if s, ok := r.decoded(args[0]); ok {
			r.read(s, depth+1)
		}
	default:
		r.pathOp(op, args)
	}
}

// pathOp records a file operation as the command that does the same.
func (r *reader) pathOp(op operation, args [][]token) {
	p := func(a []token) (string, span) { return r.path(a) }
	switch op {
	case opRemove:
		r.command([]string{"rm"}, args[:1], p)
	case opRemoveAll:
		r.command([]string{"rm", "-rf"}, args[:1], p)
	case opWrite:
		r.command([]string{"tee"}, args[:1], p)
	case opWriteMode:
		if target, ok := r.writeTarget(args); ok {
			r.command([]string{"tee"}, [][]token{target}, p)
		} else if r.lang != "perl" {
			// Reading: zero-access paths hold for code too.
			r.command([]string{"cat"}, args[:1], p)
		}
	case opWriteLast:
		if len(args) > 1 {
			r.command([]string{"cp"}, args[:2], p)
		}
	case opMove:
		if len(args) > 1 {
			r.command([]string{"mv"}, args[:2], p)
		}
	}
}

// command records head followed by each argument read by read.
func (r *reader) command(head []string, args [][]token, read func([]token) (string, span)) {
	e := effect{words: append([]string(nil), head...)}
	for range head {
		e.unk = append(e.unk, known)
	}
	for _, a := range args {
		s, u := read(a)
		e.words = append(e.words, s)
		e.unk = append(e.unk, u)
	}
	r.out = append(r.out, e)
}

// line is the command line a call runs: its literal, else a placeholder.
func (r *reader) line(arg []token, name string) effect {
	if s, ok := r.value(arg); ok {
		return effect{line: s}
	}
	return effect{words: []string{"$(" + lastPart(name) + ")"}, unk: []span{{0, 1}}}
}

// argv renders an argv-style call: a list literal or the arguments, each
// a word; a single string with shell=True (or perl's and ruby's system
// with one string) is a command line.
func (r *reader) argv(args [][]token, name string) effect {
	if shellArgv(args) {
		if s, ok := r.value(args[0]); ok {
			return effect{line: s}
		}
	}
	elems := args
	if isList(args[0]) {
		elems = listItems(args[0])
	} else if len(args) > 1 && isList(args[1]) {
		// execFile('rm', ['-rf', '/']), os.execvp('rm', ['rm', …])
		rest := listItems(args[1])
		if len(rest) > 0 {
			a, ok1 := r.value(rest[0])
			b, ok2 := r.value(args[0])
			if ok1 && ok2 && a == b {
				rest = rest[1:]
			}
		}
		elems = append([][]token{args[0]}, rest...)
	}
	var e effect
	for _, el := range elems {
		if keyword(el) {
			continue
		}
		if s, ok := r.value(el); ok {
			e.words = append(e.words, s)
			e.unk = append(e.unk, known)
		} else {
			e.words = append(e.words, "$("+lastPart(name)+")")
			e.unk = append(e.unk, span{0, 1})
		}
	}
	return e
}

// keyword reports a keyword argument (check=True), not a word.
func keyword(ts []token) bool {
	return len(ts) > 1 && ts[0].kind == tokName && ts[1].text == "="
}

func isList(ts []token) bool { return len(ts) > 0 && ts[0].text == "[" }

// listItems splits a list literal into its items.
func listItems(ts []token) [][]token {
	if len(ts) < 2 {
		return nil
	}
	return splitTop(ts[1:len(ts)-1], ",")
}

func lastPart(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// shellArgv reports whether an argv-style call runs its first argument
// through a shell: subprocess's shell=True, or a single string.
func shellArgv(args [][]token) bool {
	for _, a := range args[1:] {
		if len(a) >= 3 && (a[0].text == "shell") && (a[1].text == "=" || a[1].text == ":") && a[2].text == "True" || len(a) >= 3 && a[0].text == "shell" && a[2].text == "true" {
			return true
		}
	}
	return len(args) == 1 && !isList(args[0])
}

// writeTarget returns the path an open-like call writes, if its mode
// writes: open(p, 'w'), File.open(p, "a"), fopen(p, 'w+'), perl's
// open(FH, '>', p) and open(FH, ">p").
func (r *reader) writeTarget(args [][]token) ([]token, bool) {
	if r.lang == "perl" {
		return r.perlWriteTarget(args)
	}
	for _, a := range args[1:] {
		if len(a) > 2 && a[0].text == "mode" && a[1].text == "=" {
			a = a[2:]
		}
		if m, ok := r.value(a); ok && strings.ContainsAny(m, "wax+") && len(m) <= 4 {
			return args[0], true
		}
		for _, t := range a {
			if strings.Contains(t.text, "O_WRONLY") || strings.Contains(t.text, "O_RDWR") || strings.Contains(t.text, "O_CREAT") ||
				strings.Contains(t.text, "O_APPEND") || strings.Contains(t.text, "O_TRUNC") {
				return args[0], true
			}
		}
	}
	return nil, false
}

func (r *reader) perlWriteTarget(args [][]token) ([]token, bool) {
	if len(args) >= 3 {
		if m, ok := r.value(args[1]); ok && strings.ContainsAny(m, ">+") {
			return args[2], true
		}
	}
	if len(args) == 2 {
		if s, ok := r.value(args[1]); ok {
			if rest := strings.TrimLeft(s, "+<> "); rest != s && strings.ContainsAny(s[:len(s)-len(rest)], ">+") {
				return []token{{kind: tokString, val: rest, ok: true}}, true
			}
		}
	}
	return nil, false
}

// value reads a string expression: literals joined by the language's
// concatenation (+, or . in perl and php, or adjacency in python).
func (r *reader) value(ts []token) (string, bool) {
	if len(ts) == 0 {
		return "", false
	}
	var b strings.Builder
	for _, part := range splitTop(ts, r.concat()) {
		for _, t := range part {
			if t.kind != tokString || !t.ok {
				return "", false
			}
			b.WriteString(t.val)
		}
	}
	return b.String(), true
}

func (r *reader) concat() string {
	if r.lang == "perl" || r.lang == "php" {
		return "."
	}
	return "+"
}

// path reads a path expression: a literal, the home directory or
// EVOKORE_HOME, a path function around one, a join of such parts, a
// pathlib "/", a concatenation. What it cannot read is a placeholder,
// an unknown path.
func (r *reader) path(ts []token) (string, span) {
	if s, ok := r.pathValue(ts, 0); ok {
		return s, known
	}
	return "$(path)", span{0, len("$(path)")}
}

func (r *reader) pathValue(ts []token, depth int) (string, bool) {
	if len(ts) == 0 || depth > 8 {
		return "", false
	}
	if s, ok := r.value(ts); ok {
		return s, true
	}
	if s, ok := envPath(ts); ok {
		return s, true
	}
	for _, sep := range []string{r.concat(), "/"} {
		parts := splitTop(ts, sep)
		if len(parts) < 2 {
			continue
		}
		var vals []string
		for _, p := range parts {
			v, ok := r.pathValue(p, depth+1)
			if !ok {
				return "", false
			}
			vals = append(vals, v)
		}
		if sep == "/" {
			return joinPath(vals), true
		}
		return strings.Join(vals, ""), true
	}
	if ts[0].kind == tokName && len(ts) > 2 && ts[1].text == "(" && pathCall(ts[0].text) {
		var vals []string
		for _, a := range splitTop(ts[2:len(ts)-1], ",") {
			v, ok := r.pathValue(a, depth+1)
			if !ok {
				return "", false
			}
			vals = append(vals, v)
		}
		if len(vals) > 0 {
			return joinPath(vals), true
		}
	}
	return "", false
}

// pathCall reports a function whose value is its arguments' path:
// expanduser, Path, resolve, realpath, abspath, join, File.expand_path.
func pathCall(name string) bool {
	switch lastPart(name) {
	case "expanduser", "abspath", "realpath", "normpath", "expandvars", "Path", "PurePath", "PosixPath",
		"resolve", "expand_path", "join", "str", "fspath":
		return true
	}
	return false
}

// envPath reads the expressions that name the home directory or
// EVOKORE_HOME in each language.
func envPath(ts []token) (string, bool) {
	// require('os').homedir(), Path.home(): a call of home or homedir
	// ends the expression.
	if n := len(ts); n >= 3 && ts[n-1].text == ")" && ts[n-2].text == "(" && ts[n-3].kind == tokName {
		switch lastPart(ts[n-3].text) {
		case "home", "homedir":
			return "~", true
		}
	}
	var name, key string
	switch {
	case len(ts) == 1 && ts[0].kind == tokName:
		name = ts[0].text
	case len(ts) >= 3 && ts[0].kind == tokName && ts[len(ts)-1].kind == tokPunct:
		name = ts[0].text
		for _, t := range ts[1:] {
			if t.kind == tokString && t.ok {
				key = t.val
				break
			}
			if t.kind == tokName && key == "" && (t.text == "HOME" || t.text == "EVOKORE_HOME") {
				key = t.text
			}
		}
	default:
		return "", false
	}
	switch lastPart(name) {
	case "home", "homedir", "HOME":
		if key == "" {
			return "~", true
		}
	case "EVOKORE_HOME":
		if key == "" {
			return "$EVOKORE_HOME", true
		}
	case "environ", "get", "getenv", "ENV", "$ENV", "env", "$_SERVER", "$_ENV":
	default:
		return "", false
	}
	switch key {
	case "HOME":
		return "~", true
	case "EVOKORE_HOME":
		return "$EVOKORE_HOME", true
	}
	return "", false
}

func joinPath(parts []string) string {
	out := parts[0]
	for _, p := range parts[1:] {
		if strings.HasPrefix(p, "/") {
			out = p
			continue
		}
		out = strings.TrimSuffix(out, "/") + "/" + p
	}
	return out
}

// decoded reads base64-decoding calls around a literal
// (base64.b64decode('…'), Buffer.from('…','base64'), decode_base64('…'),
// Base64.decode64('…'), base64_decode('…')).
func (r *reader) decoded(ts []token) (string, bool) {
	if len(ts) < 3 || ts[0].kind != tokName || ts[1].text != "(" {
		return "", false
	}
	switch lastPart(ts[0].text) {
	case "b64decode", "decodebytes", "decode_base64", "decode64", "base64_decode", "atob", "from":
	default:
		return "", false
	}
	args := splitTop(ts[2:len(ts)-1], ",")
	if len(args) == 0 {
		return "", false
	}
	s, ok := r.value(args[0])
	if !ok {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// pathlibReceiver is the argument of the Path(…) a method at ts[i] is
// called on.
func pathlibReceiver(ts []token, i int) ([]token, bool) {
	if i == 0 || ts[i-1].text != ")" {
		return nil, false
	}
	depth := 0
	for j := i - 1; j >= 1; j-- {
		switch ts[j].text {
		case ")":
			depth++
		case "(":
			depth--
		}
		if depth == 0 {
			if ts[j-1].kind == tokName && pathCall(ts[j-1].text) {
				return ts[j-1 : i], true
			}
			return nil, false
		}
	}
	return nil, false
}

// lookup finds the operation of a call name: the name as written
// (os.system), its last part when the table lists it without a module
// (fs.rmSync as rmSync), and, for a method called on an expression
// (__import__('os').system, require('fs').rmSync), any module's.
func lookup(table map[string]operation, name string, method bool) (operation, bool) {
	if op, ok := table[name]; ok {
		return op, true
	}
	tail := lastPart(name)
	if tail != name {
		if op, ok := table[tail]; ok {
			return op, true
		}
		for k, op := range table {
			if strings.HasSuffix(name, "."+k) {
				return op, true
			}
		}
	}
	if method {
		for k, op := range table {
			if strings.HasSuffix(k, "."+name) {
				return op, true
			}
		}
	}
	return 0, false
}

// callArgs splits the arguments of the call whose name ends before
// ts[i]: within parentheses, or (perl, ruby) without them up to the end
// of the statement.
func callArgs(ts []token, i int, bare bool) [][]token {
	if i >= len(ts) {
		return nil
	}
	if ts[i].text == "(" {
		end := closing(ts, i)
		return nonEmpty(splitTop(ts[i+1:end], ","))
	}
	if !bare || (ts[i].kind != tokString && ts[i].text != "[" && ts[i].kind != tokName) {
		return nil
	}
	end := i
	for depth := 0; end < len(ts); end++ {
		t := ts[end].text
		if depth == 0 && (t == ";" || t == ")" || t == "}" || (ts[end].kind == tokPunct && t == "or")) {
			break
		}
		switch t {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		}
	}
	return nonEmpty(splitTop(ts[i:end], ","))
}

// closing is the index of the bracket that closes ts[open] (len(ts)
// when it is not closed).
func closing(ts []token, open int) int {
	depth := 0
	for j := open; j < len(ts); j++ {
		switch ts[j].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(ts)
}

// splitTop splits ts at the punctuation sep outside brackets.
func splitTop(ts []token, sep string) [][]token {
	var out [][]token
	depth, start := 0, 0
	for j, t := range ts {
		if t.kind != tokPunct {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case sep:
			if depth == 0 {
				out = append(out, ts[start:j])
				start = j + 1
			}
		}
	}
	return append(out, ts[start:])
}

func nonEmpty(parts [][]token) [][]token {
	out := parts[:0]
	for _, p := range parts {
		if len(p) > 0 {
			out = append(out, p)
		}
	}
	return out
}
