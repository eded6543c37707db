package hooks

import (
	"encoding/base64"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// maxDepth bounds how deep nested commands (sh -c, eval, $(…)) are
// followed; deeper nesting is itself suspicious and is judged as "ask".
const maxDepth = 8

// shellCommand is one simple command: its words after quote removal and
// with wrappers (sudo, env, sh -c, …) peeled off.
type shellCommand struct {
	words []string
}

// String joins the words with spaces; whitespace inside a word (a quoted
// commit message) becomes U+00A0, which the rules' \s does not match, so
// "git commit -m 'git push -f main'" is not read as a push.
func (c shellCommand) String() string {
	words := make([]string, len(c.words))
	for i, w := range c.words {
		words[i] = strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v' {
				return '\u00a0'
			}
			return r
		}, w)
	}
	return strings.Join(words, " ")
}

// placeholder stands for a substitution in a word: its sigil and the name
// of the command it runs, as in "$(curl)".
func placeholder(open, inner string) string {
	name := strings.TrimLeft(inner, " \t\n")
	if i := strings.IndexAny(name, " \t\n;|&()`<>$"); i >= 0 {
		name = name[:i]
	}
	if len(name) > 64 {
		name = name[:64]
	}
	name = strings.NewReplacer("'", "", "\"", "", "\\", "").Replace(name)
	if i := strings.LastIndexByte(name, '/'); i >= 0 && i < len(name)-1 {
		name = name[i+1:]
	}
	return open + name + ")"
}

// name is the command's name ("" for a bare redirection).
func (c shellCommand) name() string {
	if len(c.words) == 0 {
		return ""
	}
	return c.words[0]
}

// parsed is a Bash command line taken apart: its pipelines of simple
// commands, including those nested in substitutions, sh -c strings, eval
// arguments and decoded base64 fed to a shell.
type parsed struct {
	pipelines [][]shellCommand
	// tooDeep is set when nesting went past maxDepth.
	tooDeep bool
}

// parseShell takes a command line apart the way a POSIX shell would
// tokenise it, closely enough to see through obfuscation: quotes and
// backslashes are removed, $IFS splits words, ANSI-C $'…' strings are
// decoded, brace lists are expanded, and nested commands are parsed too.
// It never fails: what it cannot make sense of stays as literal words.
func parseShell(s string) *parsed {
	p := &parsed{}
	p.parse(s, 0)
	return p
}

// views are the strings the rules are matched against: each simple
// command, and each pipeline of two or more commands.
func (p *parsed) views() []string {
	var out []string
	for _, pl := range p.pipelines {
		parts := make([]string, 0, len(pl))
		for _, c := range pl {
			if len(c.words) > 0 {
				out = append(out, c.String())
				parts = append(parts, c.String())
			}
		}
		if len(parts) > 1 {
			out = append(out, strings.Join(parts, " | "))
		}
	}
	return out
}

func (p *parsed) commands() []shellCommand {
	var out []shellCommand
	for _, pl := range p.pipelines {
		out = append(out, pl...)
	}
	return out
}

func (p *parsed) parse(s string, depth int) {
	if depth > maxDepth {
		p.tooDeep = true
		return
	}
	lx := &lexer{src: []rune(s)}
	lx.run()
	for _, pl := range lx.pipelines {
		var cmds []shellCommand
		for _, words := range pl {
			words = expandBraces(words)
			c, nested := unwrap(words)
			for _, n := range nested {
				p.parse(n, depth+1)
			}
			cmds = append(cmds, c)
		}
		p.pipelines = append(p.pipelines, cmds)
		if decoded, ok := decodedPipe(cmds); ok {
			p.parse(decoded, depth+1)
		}
	}
	for _, n := range lx.nested {
		p.parse(n, depth+1)
	}
}

// lexer splits a command line into pipelines of word lists.
type lexer struct {
	src       []rune
	i         int
	word      strings.Builder
	inWord    bool
	words     []string
	pipeline  [][]string
	pipelines [][][]string
	nested    []string
}

func (lx *lexer) peek(off int) rune {
	if lx.i+off < len(lx.src) {
		return lx.src[lx.i+off]
	}
	return 0
}

func (lx *lexer) endWord() {
	if lx.inWord {
		lx.words = append(lx.words, lx.word.String())
		lx.word.Reset()
		lx.inWord = false
	}
}

func (lx *lexer) emit(w string) {
	lx.endWord()
	lx.words = append(lx.words, w)
}

func (lx *lexer) endCommand() {
	lx.endWord()
	if len(lx.words) > 0 {
		lx.pipeline = append(lx.pipeline, lx.words)
	}
	lx.words = nil
}

func (lx *lexer) endPipeline() {
	lx.endCommand()
	if len(lx.pipeline) > 0 {
		lx.pipelines = append(lx.pipelines, lx.pipeline)
	}
	lx.pipeline = nil
}

func (lx *lexer) add(r rune) {
	lx.word.WriteRune(r)
	lx.inWord = true
}

// balanced reads from just after an opening "(" to its matching ")",
// honouring quotes, and returns the text between.
func (lx *lexer) balanced() string {
	out := lx.balancedText()
	// $(echo …) and $(printf …) print a command line that the outer
	// command may run (eval "$(echo rm -rf /)"): judge it as one too.
	for _, pre := range []string{"echo ", "printf "} {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(out), pre); ok {
			lx.nested = append(lx.nested, rest)
		}
	}
	return out
}

func (lx *lexer) balancedText() string {
	start, depth := lx.i, 1
	var quote rune
	for ; lx.i < len(lx.src); lx.i++ {
		r := lx.src[lx.i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else if r == '\\' && quote == '"' {
				lx.i++
			}
		case r == '\\':
			lx.i++
		case r == '\'' || r == '"':
			quote = r
		case r == '(':
			depth++
		case r == ')':
			depth--
			if depth == 0 {
				out := string(lx.src[start:lx.i])
				lx.i++
				return out
			}
		}
	}
	return string(lx.src[start:min(lx.i, len(lx.src))])
}

// backtick reads from just after a "`" to the closing one.
func (lx *lexer) backtick() string {
	start := lx.i
	for ; lx.i < len(lx.src); lx.i++ {
		if lx.src[lx.i] == '\\' {
			lx.i++
			continue
		}
		if lx.src[lx.i] == '`' {
			out := string(lx.src[start:lx.i])
			lx.i++
			return out
		}
	}
	return string(lx.src[start:])
}

var ifsRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$(\{IFS\}|IFS)(\$[0-9@*#?])?`) })

func (lx *lexer) run() {
	for lx.i < len(lx.src) {
		r := lx.src[lx.i]
		switch {
		case r == '\\':
			if n := lx.peek(1); n == '\n' {
				lx.i += 2
			} else if n != 0 {
				lx.add(n)
				lx.i += 2
			} else {
				lx.i++
			}
		case r == '\'':
			lx.i++
			lx.inWord = true
			for lx.i < len(lx.src) && lx.src[lx.i] != '\'' {
				lx.word.WriteRune(lx.src[lx.i])
				lx.i++
			}
			lx.i++
		case r == '"':
			lx.i++
			lx.inWord = true
			lx.doubleQuoted()
		case r == '$' && lx.peek(1) == '\'':
			lx.i += 2
			lx.inWord = true
			lx.ansiC()
		case r == '$' && lx.peek(1) == '(' && lx.peek(2) != '(':
			lx.i += 2
			inner := lx.balanced()
			lx.nested = append(lx.nested, inner)
			lx.inWord = true
			lx.word.WriteString(placeholder("$(", inner))
		case r == '$' && ifsRef().MatchString(string(lx.src[lx.i:min(lx.i+10, len(lx.src))])):
			m := ifsRef().FindString(string(lx.src[lx.i:min(lx.i+10, len(lx.src))]))
			lx.i += len([]rune(m))
			lx.endWord()
		case r == '`':
			lx.i++
			inner := lx.backtick()
			lx.nested = append(lx.nested, inner)
			lx.inWord = true
			lx.word.WriteString(placeholder("$(", inner))
		case (r == '<' || r == '>') && lx.peek(1) == '(':
			lx.i += 2
			inner := lx.balanced()
			lx.nested = append(lx.nested, inner)
			lx.emit(placeholder(string(r)+"(", inner))
		case r == '#' && !lx.inWord:
			for lx.i < len(lx.src) && lx.src[lx.i] != '\n' {
				lx.i++
			}
		case r == ' ' || r == '\t':
			lx.endWord()
			lx.i++
		case r == '\n' || r == ';':
			lx.endPipeline()
			lx.i++
		case r == '&':
			if lx.peek(1) == '&' {
				lx.i++
			} else if lx.peek(1) == '>' {
				// &> file: a redirection.
				lx.i++
				continue
			}
			lx.endPipeline()
			lx.i++
		case r == '|':
			if lx.peek(1) == '|' {
				lx.endPipeline()
				lx.i += 2
				continue
			}
			lx.endCommand()
			lx.i++
			if lx.peek(0) == '&' {
				lx.i++
			}
		case r == '(' && lx.peek(1) == ')' && lx.inWord:
			// name() { …; }: a function definition.
			lx.word.WriteString("()")
			lx.i += 2
		case r == '(' || r == ')':
			lx.endPipeline()
			lx.i++
		case (r == '{' || r == '}') && !lx.inWord && (lx.peek(1) == ' ' || lx.peek(1) == 0 || lx.peek(1) == ';' || lx.peek(1) == '\n'):
			// a group: { cmd; }
			lx.endPipeline()
			lx.i++
		case r == '>' || r == '<':
			// A redirection is its own word; "2>" keeps the digit apart.
			lx.endWord()
			op := string(r)
			lx.i++
			for lx.peek(0) == '>' || lx.peek(0) == '&' || lx.peek(0) == '|' {
				op += string(lx.src[lx.i])
				lx.i++
			}
			lx.words = append(lx.words, op)
		default:
			lx.add(r)
			lx.i++
		}
	}
	lx.endPipeline()
}

// doubleQuoted reads a "…" string (after the opening quote): backslash
// escapes only $ ` " \ and newline, and substitutions still run.
func (lx *lexer) doubleQuoted() {
	for lx.i < len(lx.src) {
		r := lx.src[lx.i]
		switch {
		case r == '"':
			lx.i++
			return
		case r == '\\' && strings.ContainsRune("$`\"\\\n", lx.peek(1)):
			if lx.peek(1) != '\n' {
				lx.word.WriteRune(lx.peek(1))
			}
			lx.i += 2
		case r == '$' && lx.peek(1) == '(' && lx.peek(2) != '(':
			lx.i += 2
			inner := lx.balanced()
			lx.nested = append(lx.nested, inner)
			lx.word.WriteString(placeholder("$(", inner))
		case r == '`':
			lx.i++
			inner := lx.backtick()
			lx.nested = append(lx.nested, inner)
			lx.word.WriteString(placeholder("$(", inner))
		case r == '$' && ifsRef().MatchString(string(lx.src[lx.i:min(lx.i+10, len(lx.src))])):
			m := ifsRef().FindString(string(lx.src[lx.i:min(lx.i+10, len(lx.src))]))
			lx.i += len([]rune(m))
			lx.word.WriteRune(' ')
		default:
			lx.word.WriteRune(r)
			lx.i++
		}
	}
}

// ansiC decodes a $'…' string (after the opening quote).
func (lx *lexer) ansiC() {
	for lx.i < len(lx.src) {
		r := lx.src[lx.i]
		if r == '\'' {
			lx.i++
			return
		}
		if r != '\\' || lx.i+1 >= len(lx.src) {
			lx.word.WriteRune(r)
			lx.i++
			continue
		}
		lx.i++
		e := lx.src[lx.i]
		lx.i++
		switch e {
		case 'n':
			lx.word.WriteRune('\n')
		case 't':
			lx.word.WriteRune('\t')
		case 'x':
			lx.word.WriteRune(lx.number(16, 2))
		case 'u':
			lx.word.WriteRune(lx.number(16, 4))
		case '0', '1', '2', '3', '4', '5', '6', '7':
			lx.i--
			lx.word.WriteRune(lx.number(8, 3))
		default:
			lx.word.WriteRune(e)
		}
	}
}

func (lx *lexer) number(base, max int) rune {
	digits := "01234567"
	if base == 16 {
		digits = "0123456789abcdefABCDEF"
	}
	start := lx.i
	for lx.i < len(lx.src) && lx.i-start < max && strings.ContainsRune(digits, lx.src[lx.i]) {
		lx.i++
	}
	n, err := strconv.ParseUint(string(lx.src[start:lx.i]), base, 32)
	if err != nil {
		return '?'
	}
	return rune(n)
}

// expandBraces expands {a,b,c} words the way bash does before running
// them: "{rm,-rf,/}" becomes three words.
func expandBraces(words []string) []string {
	var out []string
	for _, w := range words {
		if len(w) > 2 && w[0] == '{' && w[len(w)-1] == '}' && strings.Contains(w, ",") {
			out = append(out, strings.Split(w[1:len(w)-1], ",")...)
			continue
		}
		out = append(out, w)
	}
	return out
}

var assignment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`) })

// shells are the interpreters whose -c argument is a command line.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "ash": true, "fish": true, "busybox sh": true}

// wrappers run their arguments as a command; argOpts are their options
// that take a value.
var wrappers = map[string]string{
	"sudo": "ugCDhpUrtT", "doas": "uC", "command": "", "builtin": "", "exec": "a",
	"nohup": "", "time": "fo", "nice": "n", "ionice": "cnp", "stdbuf": "ioe",
	"timeout": "sk", "env": "uCS", "xargs": "EeIiLlnPsd", "busybox": "", "chronic": "",
	"unbuffer": "", "setsid": "", "caffeinate": "", "torsocks": "", "strace": "eop",
}

// unwrap peels wrappers off a simple command and returns what it really
// runs, plus command lines it hands to a shell (sh -c, eval).
func unwrap(words []string) (shellCommand, []string) {
	var nested []string
	for range 16 {
		for len(words) > 0 && assignment().MatchString(words[0]) {
			words = words[1:]
		}
		if len(words) == 0 {
			break
		}
		name := words[0]
		if strings.Contains(name, "/") && !strings.HasSuffix(name, "/") {
			name = filepath.Base(name)
			words = append([]string{name}, words[1:]...)
		}
		if name == "eval" {
			nested = append(nested, strings.Join(words[1:], " "))
			return shellCommand{words: words}, nested
		}
		if lang, code := inlineCode(words); lang != "" {
			nested = append(nested, translate(lang, code, 0)...)
			return shellCommand{words: words}, nested
		}
		if name == "script" {
			// script -c CMD runs CMD on a pseudo-terminal.
			nested = append(nested, optionValues(words[1:], "c", []string{"--command"}, "ETo")...)
			return shellCommand{words: words}, nested
		}
		if shells[name] {
			for i := 1; i < len(words); i++ {
				w := words[i]
				if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "c") && i+1 < len(words) {
					nested = append(nested, words[i+1])
					return shellCommand{words: words}, nested
				}
			}
			break
		}
		opts, ok := wrappers[name]
		if !ok {
			break
		}
		rest := words[1:]
		for len(rest) > 0 {
			w := rest[0]
			if w == "--" {
				rest = rest[1:]
				break
			}
			if name == "env" && assignment().MatchString(w) {
				rest = rest[1:]
				continue
			}
			if !strings.HasPrefix(w, "-") || w == "-" {
				// timeout's duration and nice's bare priority come first.
				if (name == "timeout" || name == "nice") && len(rest) > 1 && strings.IndexFunc(w, func(r rune) bool { return r >= '0' && r <= '9' }) == 0 {
					rest = rest[1:]
				}
				break
			}
			rest = rest[1:]
			if len(w) == 2 && strings.ContainsRune(opts, rune(w[1])) && len(rest) > 0 {
				rest = rest[1:]
			}
		}
		if len(rest) == 0 {
			return shellCommand{words: words}, nested
		}
		words = rest
	}
	return shellCommand{words: words}, nested
}

// decodedPipe recognises `echo <base64> | base64 -d | …` and returns the
// decoded text, so what it hides is judged too.
func decodedPipe(cmds []shellCommand) (string, bool) {
	if len(cmds) < 2 || (cmds[0].name() != "echo" && cmds[0].name() != "printf") {
		return "", false
	}
	for _, c := range cmds[1:] {
		if c.name() != "base64" {
			continue
		}
		for _, w := range c.words[1:] {
			if w == "-d" || w == "--decode" || w == "-D" {
				for _, arg := range cmds[0].words[1:] {
					if strings.HasPrefix(arg, "-") {
						continue
					}
					if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(arg)); err == nil {
						return string(b), true
					}
				}
			}
		}
	}
	return "", false
}
