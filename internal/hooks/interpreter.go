package hooks

import (
	"encoding/base64"
	"regexp"
	"strings"
	"sync"
)

// Interpreter one-liners (python -c, node -e, perl -e, ruby -e, php -r)
// run code damage-control cannot parse as shell. Rather than a second rule
// language, the operations that matter in that code are translated into
// the shell command that does the same thing, and those commands are judged
// by the same rules and path lists as any other: shutil.rmtree('/') is
// judged as `rm -rf /`, os.system("…") as the command line it runs,
// open(p, 'w') as a write to p. An argument that is not a literal the
// translation can read (a variable, a computed path) becomes a
// substitution placeholder, which the rules treat as unknown: a recursive
// delete of an unknown path asks, a command run from a variable asks.
//
// This is a reading of the common spellings, not an interpreter: code
// that hides its operations (getattr with computed names, a script file)
// is not seen. docs/security.md says so.

// maxCodeDepth bounds eval-of-eval in interpreter code.
const maxCodeDepth = 4

// inlineCode returns the code an interpreter command runs from its
// command line, and the interpreter's language ("" when words is not an
// interpreter given inline code).
func inlineCode(words []string) (lang, code string) {
	if len(words) < 2 {
		return "", ""
	}
	name := words[0]
	var codes []string
	switch {
	case pythonName().MatchString(name):
		lang = "python"
		codes = optionValues(words[1:], "c", nil, "WX")
	case name == "node" || name == "nodejs" || name == "bun":
		lang = "js"
		codes = optionValues(words[1:], "ep", []string{"--eval", "--print"}, "r")
	case name == "deno" && words[1] == "eval" && len(words) > 2:
		lang = "js"
		codes = []string{words[len(words)-1]}
	case name == "perl":
		lang = "perl"
		codes = optionValues(words[1:], "eE", nil, "IMm")
	case name == "ruby":
		lang = "ruby"
		codes = optionValues(words[1:], "e", nil, "Ir")
	case name == "php":
		lang = "php"
		codes = optionValues(words[1:], "r", nil, "dc")
	}
	if len(codes) == 0 {
		return "", ""
	}
	return lang, strings.Join(codes, "\n")
}

var pythonName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(python|pypy)[0-9.]*$`) })

// optionValues collects the values of the code options of an
// interpreter's command line: a short option in short (alone, last of a
// cluster with the value next, or with the value attached), a long one in
// long (value next or after "="). Options in valued take a value that is
// skipped. Scanning stops at the first operand (a script file).
func optionValues(args []string, short string, long []string, valued string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w == "--" || !strings.HasPrefix(w, "-") || w == "-" {
			break
		}
		if strings.HasPrefix(w, "--") {
			for _, l := range long {
				if w == l && i+1 < len(args) {
					out = append(out, args[i+1])
					i++
				} else if v, ok := strings.CutPrefix(w, l+"="); ok {
					out = append(out, v)
				}
			}
			continue
		}
		for j := 1; j < len(w); j++ {
			c := w[j]
			if strings.IndexByte(short, c) >= 0 {
				if j+1 < len(w) {
					out = append(out, w[j+1:])
				} else if i+1 < len(args) {
					out = append(out, args[i+1])
					i++
				}
				break
			}
			if strings.IndexByte(valued, c) >= 0 {
				if j+1 == len(w) {
					i++
				}
				break
			}
		}
	}
	return out
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
)

// calls maps, per language, the call names (as written, with the last
// dotted part matched) to what they do.
var calls = map[string]map[string]operation{
	"python": {
		"os.system": opShell, "os.popen": opShell, "subprocess.getoutput": opShell, "subprocess.getstatusoutput": opShell,
		"subprocess.run": opArgv, "subprocess.call": opArgv, "subprocess.check_call": opArgv, "subprocess.check_output": opArgv,
		"subprocess.Popen": opArgv, "os.execv": opArgv, "os.execvp": opArgv, "os.execl": opArgv, "os.execlp": opArgv,
		"os.spawnv": opArgv, "os.spawnvp": opArgv, "os.spawnl": opArgv, "os.spawnlp": opArgv, "pty.spawn": opArgv,
		"exec": opEval, "eval": opEval, "compile": opEval,
		"shutil.rmtree": opRemoveAll, "rmtree": opRemoveAll,
		"os.remove": opRemove, "os.unlink": opRemove, "os.rmdir": opRemove, "os.removedirs": opRemoveAll,
		"open": opWriteMode, "io.open": opWriteMode, "os.open": opWriteMode, "os.truncate": opWrite,
		"shutil.copy": opWriteLast, "shutil.copy2": opWriteLast, "shutil.copyfile": opWriteLast, "shutil.copytree": opWriteLast,
		"shutil.move": opMove, "os.rename": opMove, "os.replace": opMove,
	},
	"js": {
		"execSync": opShell, "exec": opShell,
		"execFileSync": opArgv, "execFile": opArgv, "spawnSync": opArgv, "spawn": opArgv,
		"eval": opEval, "Function": opEval,
		"rmSync": opRemoveAll, "rm": opRemoveAll, "rmdirSync": opRemoveAll, "rmdir": opRemoveAll, "rimraf": opRemoveAll,
		"unlinkSync": opRemove, "unlink": opRemove,
		"writeFileSync": opWrite, "writeFile": opWrite, "appendFileSync": opWrite, "appendFile": opWrite,
		"createWriteStream": opWrite, "truncateSync": opWrite, "openSync": opWriteMode,
		"copyFileSync": opWriteLast, "copyFile": opWriteLast, "cpSync": opWriteLast,
		"renameSync": opMove, "rename": opMove,
	},
	"perl": {
		"system": opArgv, "exec": opArgv, "qx": opShell,
		"eval":   opEval,
		"rmtree": opRemoveAll, "remove_tree": opRemoveAll, "unlink": opRemove, "rmdir": opRemove,
		"open": opWriteMode, "sysopen": opWriteMode, "truncate": opWrite,
		"copy": opWriteLast, "move": opMove, "rename": opMove,
	},
	"ruby": {
		"system": opArgv, "exec": opArgv, "spawn": opArgv, "IO.popen": opShell,
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

// callSite matches a call: a dotted name and an opening parenthesis, or
// (perl, ruby) a name followed by a literal argument without one.
var callSite = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`([A-Za-z_$][A-Za-z0-9_$]*(?:\s*(?:\.|::|->)\s*[A-Za-z_$][A-Za-z0-9_$]*)*)(\s*\(|\s+["'\[])`)
})

// translate returns the shell command lines that do what code does, as
// far as damage-control judges it.
func translate(lang, code string, depth int) []string {
	if depth > maxCodeDepth || len(code) > 1<<16 {
		return nil
	}
	table := calls[lang]
	var out []string
	// Backticks and %x(…) / qx(…) run a command line in perl, ruby and php.
	if lang == "perl" || lang == "ruby" || lang == "php" {
		for _, m := range quotedCommand().FindAllStringSubmatch(code, -1) {
			out = append(out, firstNonEmpty(m[1:]...))
		}
	}
	for _, loc := range callSite().FindAllStringSubmatchIndex(code, -1) {
		name := spaceless(code[loc[2]:loc[3]])
		method := loc[2] > 0 && code[loc[2]-1] == '.'
		op, ok := lookup(table, name, method)
		if !ok {
			continue
		}
		open := loc[4]
		args := callArgs(code, open, lang)
		if len(args) == 0 {
			continue
		}
		home := lang
		switch op {
		case opShell:
			if s, ok := literal(args[0], home); ok {
				out = append(out, s)
			} else {
				out = append(out, placeholder("$(", name))
			}
		case opArgv:
			if shellArgv(args) {
				if s, ok := literal(args[0], home); ok {
					out = append(out, s)
					continue
				}
			}
			out = append(out, argvLine(args, home, name))
		case opEval:
			if s, ok := literal(args[0], home); ok {
				out = append(out, translate(lang, s, depth+1)...)
			} else if s, ok := decoded(args[0], home); ok {
				out = append(out, translate(lang, s, depth+1)...)
			}
		case opRemove:
			out = append(out, "rm "+quoted(pathArg(args[0], home)))
		case opRemoveAll:
			out = append(out, "rm -rf "+quoted(pathArg(args[0], home)))
		case opWrite:
			out = append(out, "tee "+quoted(pathArg(args[0], home)))
		case opWriteMode:
			if p, ok := writeTarget(args, lang); ok {
				out = append(out, "tee "+quoted(pathArg(p, home)))
			} else if lang != "perl" {
				// Reading: zero-access paths hold for code too.
				out = append(out, "cat "+quoted(pathArg(args[0], home)))
			}
		case opWriteLast:
			if len(args) > 1 {
				out = append(out, "cp "+quoted(pathArg(args[0], home))+" "+quoted(pathArg(args[1], home)))
			}
		case opMove:
			if len(args) > 1 {
				out = append(out, "mv "+quoted(pathArg(args[0], home))+" "+quoted(pathArg(args[1], home)))
			}
		}
	}
	// Path('/x').unlink(), Path.home().rmdir(): pathlib's methods act on
	// the path they are called on.
	if lang == "python" {
		for _, m := range pathMethod().FindAllStringSubmatch(code, -1) {
			p := pathArg(m[1], lang)
			switch m[2] {
			case "unlink", "rmdir":
				out = append(out, "rm "+quoted(p))
			default:
				out = append(out, "tee "+quoted(p))
			}
		}
	}
	return out
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

var quotedCommand = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("`([^`]*)`|%x\\(([^)]*)\\)|%x\\{([^}]*)\\}|qx\\(([^)]*)\\)|qx\\{([^}]*)\\}")
})

var pathMethod = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`Path\(([^()]*(?:\([^()]*\))?[^()]*)\)\s*\.\s*(unlink|rmdir|write_text|write_bytes|touch)\s*\(`)
})

func spaceless(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' {
			return -1
		}
		return r
	}, s)
}

// lookup finds the operation of a call name: the name as written
// (os.system), its last part when the table lists it without a module
// (fs.rmSync as rmSync), and, for a method called on an expression
// (__import__('os').system, require('fs').rmSync), any module's.
func lookup(table map[string]operation, name string, method bool) (operation, bool) {
	name = strings.NewReplacer("::", ".", "->", ".").Replace(name)
	if op, ok := table[name]; ok {
		return op, true
	}
	tail := name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		tail = name[i+1:]
		if op, ok := table[tail]; ok {
			return op, true
		}
		for k, op := range table {
			if strings.HasSuffix(name, "."+k) {
				return op, true
			}
		}
	}
	if method && tail == name {
		for k, op := range table {
			if strings.HasSuffix(k, "."+name) {
				return op, true
			}
		}
	}
	return 0, false
}

// callArgs splits the arguments of a call whose parenthesis (or, without
// one, first argument) starts at open: top-level commas split, brackets
// and quotes nest. Without parentheses the arguments run to the end of
// the statement.
func callArgs(code string, open int, lang string) []string {
	for open < len(code) && (code[open] == ' ' || code[open] == '\t') {
		open++
	}
	if open >= len(code) {
		return nil
	}
	paren := code[open] == '(' || code[open] == '['
	i := open
	if paren {
		i++
	}
	var args []string
	depth, start := 0, i
	for ; i < len(code); i++ {
		c := code[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = skipString(code, i)
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			if depth == 0 {
				args = append(args, strings.TrimSpace(code[start:i]))
				return nonEmpty(args)
			}
			depth--
		case c == ',' && depth == 0:
			args = append(args, strings.TrimSpace(code[start:i]))
			start = i + 1
		case (c == ';' || c == '\n') && depth == 0 && !paren:
			args = append(args, strings.TrimSpace(code[start:i]))
			return nonEmpty(args)
		}
	}
	return nonEmpty(append(args, strings.TrimSpace(code[start:min(i, len(code))])))
}

func nonEmpty(ss []string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// skipString returns the index of the quote that closes the string
// opening at i (or the end of code).
func skipString(code string, i int) int {
	q := code[i]
	if q != '`' && strings.HasPrefix(code[i:], strings.Repeat(string(q), 3)) {
		if end := strings.Index(code[i+3:], strings.Repeat(string(q), 3)); end >= 0 {
			return i + 3 + end + 2
		}
		return len(code) - 1
	}
	for j := i + 1; j < len(code); j++ {
		if code[j] == '\\' {
			j++
			continue
		}
		if code[j] == q {
			return j
		}
	}
	return len(code) - 1
}

// shellArgv reports whether an argv-style call runs its first argument
// through a shell: subprocess's shell=True, or a single string (perl's
// and ruby's system with one argument).
func shellArgv(args []string) bool {
	for _, a := range args[1:] {
		if strings.ReplaceAll(a, " ", "") == "shell=True" || strings.Contains(a, "shell:true") || strings.Contains(a, "shell: true") {
			return true
		}
	}
	return len(args) == 1 && !strings.HasPrefix(strings.TrimSpace(args[0]), "[")
}

// argvLine renders an argv-style call as a command line: a list literal
// or the arguments, each a shell word.
func argvLine(args []string, lang, name string) string {
	elems := args
	if l := strings.TrimSpace(args[0]); strings.HasPrefix(l, "[") {
		elems = callArgs(l, 0, lang)
	} else if len(args) > 1 {
		if l := strings.TrimSpace(args[1]); strings.HasPrefix(l, "[") {
			// execFile('rm', ['-rf', '/']), os.execvp('rm', ['rm', …])
			rest := callArgs(l, 0, lang)
			if len(rest) > 0 {
				if first, ok := literal(rest[0], lang); ok {
					if cmd, ok2 := literal(args[0], lang); ok2 && first == cmd {
						rest = rest[1:]
					}
				}
			}
			elems = append([]string{args[0]}, rest...)
		}
	}
	var words []string
	for _, e := range elems {
		if strings.Contains(e, "=") && !strings.HasPrefix(strings.TrimSpace(e), "'") && !strings.HasPrefix(strings.TrimSpace(e), `"`) {
			continue // a keyword argument (check=True), not a word
		}
		if s, ok := literal(e, lang); ok {
			words = append(words, quoted(s))
		} else {
			words = append(words, placeholder("$(", name))
		}
	}
	return strings.Join(words, " ")
}

// writeTarget returns the path an open-like call writes, if its mode
// writes: open(p, 'w'), File.open(p, "a"), fopen(p, 'w+'), perl's
// open(FH, '>', p) and open(FH, ">p").
func writeTarget(args []string, lang string) (string, bool) {
	if lang == "perl" {
		if len(args) >= 3 {
			if m, ok := literal(args[1], lang); ok && strings.ContainsAny(m, ">+") {
				return args[2], true
			}
		}
		if len(args) == 2 {
			if s, ok := literal(args[1], lang); ok {
				if rest := strings.TrimLeft(s, "+<> "); rest != s && strings.ContainsAny(s[:len(s)-len(rest)], ">+") {
					return quoted(rest), true
				}
			}
		}
		return "", false
	}
	if lang == "js" { // openSync(p, 'w')
		if len(args) > 1 {
			if m, ok := literal(args[1], lang); ok && strings.ContainsAny(m, "wa+") {
				return args[0], true
			}
		}
		return "", false
	}
	for _, a := range args[1:] {
		a = strings.TrimSpace(a)
		if v, ok := strings.CutPrefix(strings.ReplaceAll(a, " ", ""), "mode="); ok {
			a = v
		}
		if m, ok := literal(a, lang); ok && strings.ContainsAny(m, "wax+") && len(m) <= 4 {
			return args[0], true
		}
		if strings.Contains(a, "O_WRONLY") || strings.Contains(a, "O_RDWR") || strings.Contains(a, "O_CREAT") ||
			strings.Contains(a, "O_APPEND") || strings.Contains(a, "O_TRUNC") {
			return args[0], true
		}
	}
	return "", false
}

// homeExpr matches expressions that name the user's home directory or
// EVOKORE_HOME in each language.
var homeExpr = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:(?:pathlib\.)?Path\.home\(\)|(?:os\.|require\(\s*['"](?:node:)?os['"]\s*\)\.)?homedir\(\)|Dir\.home|(?:os\.)?environ(?:\.get)?[\[(]\s*['"]HOME['"]\s*[\])]|(?:os\.)?getenv\(\s*['"]HOME['"]\s*\)|process\.env\.HOME|process\.env\[['"]HOME['"]\]|ENV\[['"]HOME['"]\]|\$ENV\{['"]?HOME['"]?\}|getenv\(['"]HOME['"]\)|\$_SERVER\[['"]HOME['"]\])$`)
})

var evokoreHomeExpr = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:(?:os\.)?environ(?:\.get)?[\[(]\s*['"]EVOKORE_HOME['"].*[\])]|(?:os\.)?getenv\(\s*['"]EVOKORE_HOME['"].*\)|process\.env\.EVOKORE_HOME|process\.env\[['"]EVOKORE_HOME['"]\]|ENV\[['"]EVOKORE_HOME['"]\]|\$ENV\{['"]?EVOKORE_HOME['"]?\})$`)
})

// wrapperCall matches a call whose value is its first argument's path:
// expanduser, Path, resolve, realpath, abspath, File.expand_path.
var wrapperCall = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:os\.path\.(?:expanduser|abspath|realpath|normpath|expandvars)|(?:pathlib\.)?(?:Pure)?(?:Posix)?Path|path\.resolve|File\.expand_path|realpath|str)\((.*)\)$`)
})

var joinCall = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:os\.path\.join|path\.join|File\.join|path\.resolve)\((.*)\)$`)
})

// pathArg reads a path expression: a literal, a home expression, a path
// wrapper around one, a join of such parts or a "/" of pathlib. What it
// cannot read becomes a placeholder, an unknown path.
func pathArg(expr, lang string) string {
	expr = strings.TrimSpace(expr)
	if s, ok := literal(expr, lang); ok {
		return s
	}
	if homeExpr().MatchString(expr) {
		return "~"
	}
	if evokoreHomeExpr().MatchString(expr) {
		return "$EVOKORE_HOME"
	}
	if m := joinCall().FindStringSubmatch(expr); m != nil {
		var parts []string
		for _, a := range callArgs(m[1]+")", 0, lang) {
			parts = append(parts, pathArg(a, lang))
		}
		if len(parts) > 0 {
			return joinPath(parts)
		}
	}
	if m := wrapperCall().FindStringSubmatch(expr); m != nil {
		if args := callArgs(m[1]+")", 0, lang); len(args) > 0 {
			if len(args) > 1 {
				parts := make([]string, len(args))
				for i, a := range args {
					parts[i] = pathArg(a, lang)
				}
				return joinPath(parts)
			}
			return pathArg(args[0], lang)
		}
	}
	// Concatenation: process.env.HOME + "/.ssh/id_rsa"
	concat := byte('+')
	if lang == "perl" || lang == "php" {
		concat = '.'
	}
	if parts := splitTop(expr, concat); len(parts) > 1 {
		var b strings.Builder
		for _, p := range parts {
			v := pathArg(p, lang)
			if strings.HasPrefix(v, "$(") {
				return v
			}
			b.WriteString(v)
		}
		return b.String()
	}
	// pathlib: Path.home() / ".evokore" / "pins.json"
	if parts := splitTop(expr, '/'); len(parts) > 1 {
		out := make([]string, len(parts))
		for i, p := range parts {
			out[i] = pathArg(p, lang)
		}
		return joinPath(out)
	}
	return placeholder("$(", "path")
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

// splitTop splits s at sep outside quotes and brackets.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = skipString(s, i)
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == sep && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// literal reads a string expression: one literal, or literals joined by
// "+" (or "." in perl and php, or adjacency in python).
func literal(expr, lang string) (string, bool) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return "", false
	}
	concat := byte('+')
	if lang == "perl" || lang == "php" {
		concat = '.'
	}
	parts := splitTop(expr, concat)
	if len(parts) > 1 {
		var b strings.Builder
		for _, p := range parts {
			s, ok := literal(p, lang)
			if !ok {
				return "", false
			}
			b.WriteString(s)
		}
		return b.String(), true
	}
	return stringLiteral(expr, lang)
}

// stringLiteral reads one quoted string with its prefixes (r, b, u, f) or
// perl's q(…)/qq(…), with the common escapes decoded.
func stringLiteral(s, lang string) (string, bool) {
	raw := false
	if lang == "python" {
		p := strings.IndexAny(s, `'"`)
		if p < 0 || p > 2 || strings.Trim(strings.ToLower(s[:p]), "rbuf") != "" {
			return "", false
		}
		raw = strings.ContainsAny(s[:p], "rR")
		s = s[p:]
	}
	if lang == "perl" {
		for _, q := range []string{"qq", "q"} {
			if rest, ok := strings.CutPrefix(s, q); ok && len(rest) >= 2 {
				open, closer := rest[0], rest[len(rest)-1]
				if pairs := map[byte]byte{'(': ')', '{': '}', '[': ']', '<': '>'}; pairs[open] == closer || (open == closer && open != ' ') {
					return rest[1 : len(rest)-1], true
				}
			}
		}
	}
	if len(s) < 2 {
		return "", false
	}
	q := s[0]
	if q != '\'' && q != '"' && !(q == '`' && lang == "js") {
		return "", false
	}
	body := s
	if len(s) >= 6 && strings.HasPrefix(s, strings.Repeat(string(q), 3)) && strings.HasSuffix(s, strings.Repeat(string(q), 3)) {
		body = s[3 : len(s)-3]
	} else {
		if s[len(s)-1] != q || skipString(s, 0) != len(s)-1 {
			return "", false
		}
		body = s[1 : len(s)-1]
	}
	if q == '`' && strings.Contains(body, "${") {
		return "", false
	}
	if raw || (q == '\'' && (lang == "perl" || lang == "ruby" || lang == "php")) {
		return body, true
	}
	return unescape(body), true
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'x':
			if i+2 < len(s) {
				var v byte
				ok := true
				for _, c := range []byte(s[i+1 : i+3]) {
					switch {
					case c >= '0' && c <= '9':
						v = v*16 + c - '0'
					case c >= 'a' && c <= 'f':
						v = v*16 + c - 'a' + 10
					case c >= 'A' && c <= 'F':
						v = v*16 + c - 'A' + 10
					default:
						ok = false
					}
				}
				if ok {
					b.WriteByte(v)
					i += 2
					continue
				}
			}
			b.WriteByte('x')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// decoded reads base64-decoding expressions around a literal
// (base64.b64decode('…'), Buffer.from('…','base64'), decode_base64('…'),
// Base64.decode64('…'), base64_decode('…')).
func decoded(expr, lang string) (string, bool) {
	m := b64Call().FindStringSubmatch(strings.TrimSpace(expr))
	if m == nil {
		return "", false
	}
	s, ok := literal(m[1], lang)
	if !ok {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return "", false
	}
	return string(b), true
}

var b64Call = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:b64decode|decodebytes|decode_base64|decode64|base64_decode|atob|Buffer\.from)\(\s*((?:[rbuRBU]{0,2})?(?:'[^']*'|"[^"]*"))`)
})

// quoted is s as one shell word.
func quoted(s string) string {
	if strings.HasPrefix(s, "$(") && strings.HasSuffix(s, ")") && !strings.ContainsAny(s[2:len(s)-1], " '\"") {
		return s // a placeholder stays a substitution
	}
	if s == "~" || strings.HasPrefix(s, "~/") || strings.HasPrefix(s, "$EVOKORE_HOME") {
		return s[:strings.IndexAny(s+"/", "/")] + quotedPlain(s[strings.IndexAny(s+"/", "/"):])
	}
	return quotedPlain(s)
}

func quotedPlain(s string) string {
	if s == "" {
		return ""
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
