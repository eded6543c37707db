package hooks

import (
	"strconv"
	"strings"
)

// The tokens of interpreter code: enough of Python's, JavaScript's,
// Perl's, Ruby's and PHP's lexical syntax to find names, calls and the
// values of string literals.

const (
	tokName    = 'n' // a dotted name: os.path.join, require, $ENV
	tokString  = 's' // a string literal; val holds its value when ok
	tokCommand = 'c' // a command string: `…`, qx(…), %x(…)
	tokPunct   = 'p' // one punctuation character, or ";" for a line end
	tokOther   = 'o' // a number or anything else
)

type token struct {
	kind byte
	text string
	val  string
	// ok says the string's value is known (no interpolation).
	ok bool
	// method marks a name called on an expression: .system in
	// __import__('os').system.
	method bool
}

type lexer struct {
	src  string
	lang string
	i    int
	out  []token
}

// tokenize splits code into tokens.
func tokenize(code, lang string) []token {
	lx := &lexer{src: code, lang: lang}
	for lx.i < len(lx.src) && len(lx.out) < 1<<14 {
		lx.next()
	}
	return lx.out
}

func (lx *lexer) peek(off int) byte {
	if lx.i+off < len(lx.src) {
		return lx.src[lx.i+off]
	}
	return 0
}

func (lx *lexer) next() {
	c := lx.src[lx.i]
	switch {
	case c == '\n':
		lx.punct(";")
	case c == ' ' || c == '\t' || c == '\r' || c == '\\':
		lx.i++
	case lx.comment():
	case c == '\'' || c == '"':
		lx.str("")
	case c == '`':
		lx.backtick()
	case c == '%' && lx.lang == "ruby" && strings.IndexByte("xqQwW", lx.peek(1)) >= 0 && strings.IndexByte("({[<|!/", lx.peek(2)) >= 0:
		kind := lx.peek(1)
		lx.i += 2
		lx.quoteLike(kind == 'x', kind != 'q')
	case isNameStart(c):
		lx.name()
	case (c == '.' || c == '-' && lx.peek(1) == '>') && lx.afterDot() != 0:
		lx.name()
	default:
		if c >= '0' && c <= '9' {
			j := lx.i
			for j < len(lx.src) && (isNameChar(lx.src[j]) || lx.src[j] == '.') {
				j++
			}
			lx.out = append(lx.out, token{kind: tokOther, text: lx.src[lx.i:j]})
			lx.i = j
			return
		}
		lx.punct(string(c))
	}
}

func (lx *lexer) punct(s string) {
	lx.out = append(lx.out, token{kind: tokPunct, text: s})
	lx.i++
}

func isNameStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isNameChar(c byte) bool { return isNameStart(c) || c >= '0' && c <= '9' }

// comment skips a comment at the cursor.
func (lx *lexer) comment() bool {
	c := lx.src[lx.i]
	hash := c == '#' && lx.lang != "js"
	slashes := c == '/' && lx.peek(1) == '/' && (lx.lang == "js" || lx.lang == "php")
	if !hash && !slashes {
		return false
	}
	for lx.i < len(lx.src) && lx.src[lx.i] != '\n' {
		lx.i++
	}
	return true
}

// afterDot is the length of a member separator (".", "->", "::") at the
// cursor when a name follows it, else 0.
func (lx *lexer) afterDot() int {
	n := 0
	switch {
	case lx.peek(0) == '.':
		n = 1
	case lx.peek(0) == '-' && lx.peek(1) == '>', lx.peek(0) == ':' && lx.peek(1) == ':':
		n = 2
	}
	j := lx.i + n
	for j < len(lx.src) && (lx.src[j] == ' ' || lx.src[j] == '\t') {
		j++
	}
	if n == 0 || j >= len(lx.src) || !isNameStart(lx.src[j]) || lx.src[j] == '$' {
		return 0
	}
	return j - lx.i
}

// name reads a dotted name, or a string with a prefix (r'…', f"…") or a
// perl quote-like (q(…), qq{…}, qx(…)).
func (lx *lexer) name() {
	method := false
	if n := lx.afterDot(); n > 0 && !isNameStart(lx.src[lx.i]) {
		lx.i += n
		method = true
	}
	start := lx.i
	var b strings.Builder
	for {
		for lx.i < len(lx.src) && isNameChar(lx.src[lx.i]) {
			lx.i++
		}
		b.WriteString(lx.src[start:lx.i])
		n := lx.afterDot()
		if n == 0 {
			break
		}
		b.WriteByte('.')
		lx.i += n
		start = lx.i
	}
	text := b.String()
	if lx.prefixed(text) {
		return
	}
	lx.out = append(lx.out, token{kind: tokName, text: text, method: method})
}

// prefixed reads the string a name prefixes, if it does.
func (lx *lexer) prefixed(text string) bool {
	q := lx.peek(0)
	switch {
	case lx.lang == "python" && (q == '\'' || q == '"') && len(text) <= 2 && strings.Trim(strings.ToLower(text), "rbuf") == "":
		lx.str(strings.ToLower(text))
		return true
	case lx.lang == "perl" && (text == "q" || text == "qq" || text == "qx" || text == "qw") && q != 0 && strings.IndexByte("({[<|!/#", q) >= 0:
		lx.quoteLike(text == "qx", text != "q")
		return true
	}
	return false
}

// str reads a quoted string at the cursor; prefix holds python's string
// prefixes.
func (lx *lexer) str(prefix string) {
	q := lx.src[lx.i]
	triple := lx.lang == "python" && lx.peek(1) == q && lx.peek(2) == q
	open := 1
	if triple {
		open = 3
	}
	lx.i += open
	start := lx.i
	end := lx.i
	for end < len(lx.src) {
		if lx.src[end] == '\\' {
			end += 2
			continue
		}
		if lx.src[end] == q && (!triple || strings.HasPrefix(lx.src[end:], strings.Repeat(string(q), 3))) {
			break
		}
		end++
	}
	end = min(end, len(lx.src))
	raw := lx.src[start:end]
	lx.i = min(end+open, len(lx.src))
	val, ok := lx.value(raw, q, prefix)
	lx.out = append(lx.out, token{kind: tokString, text: raw, val: val, ok: ok})
}

// value decodes a string's body: escapes, and whether interpolation
// makes it unknown.
func (lx *lexer) value(raw string, q byte, prefix string) (string, bool) {
	interpolates := false
	switch lx.lang {
	case "python":
		interpolates = strings.Contains(prefix, "f") && strings.Contains(strings.ReplaceAll(raw, "{{", ""), "{")
	case "perl", "php":
		interpolates = q == '"' && strings.ContainsAny(raw, "$@")
	case "ruby":
		interpolates = q == '"' && strings.Contains(raw, "#{")
	case "js":
		interpolates = q == '`' && strings.Contains(raw, "${")
	}
	if interpolates {
		return raw, false
	}
	if strings.Contains(prefix, "r") {
		return raw, true
	}
	if q == '\'' && lx.lang != "python" && lx.lang != "js" {
		return strings.NewReplacer(`\\`, `\`, `\'`, `'`).Replace(raw), true
	}
	return unquoteEscapes(raw), true
}

// unquoteEscapes decodes the common backslash escapes.
func unquoteEscapes(s string) string {
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
			if v, err := strconv.ParseUint(s[i+1:min(i+3, len(s))], 16, 8); err == nil && i+2 < len(s) {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
			b.WriteByte('x')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// backtick reads `…`: a command string in perl, ruby and php, a
// template literal in JavaScript, a plain string elsewhere.
func (lx *lexer) backtick() {
	if lx.lang == "js" || lx.lang == "python" {
		lx.str("")
		return
	}
	lx.quoteLike(true, true)
}

// quoteLike reads a string between the delimiter at the cursor and its
// closing one: a command string when command is set.
func (lx *lexer) quoteLike(command, interpolates bool) {
	open := lx.src[lx.i]
	closer := map[byte]byte{'(': ')', '{': '}', '[': ']', '<': '>'}[open]
	if closer == 0 {
		closer = open
	}
	lx.i++
	start, depth := lx.i, 0
	for lx.i < len(lx.src) {
		c := lx.src[lx.i]
		if c == '\\' {
			lx.i += 2
			continue
		}
		if c == open && closer != open {
			depth++
		} else if c == closer {
			if depth == 0 {
				break
			}
			depth--
		}
		lx.i++
	}
	end := min(lx.i, len(lx.src))
	raw := lx.src[start:end]
	lx.i = min(end+1, len(lx.src))
	kind := byte(tokString)
	if command {
		kind = tokCommand
	}
	ok := !interpolates || !strings.ContainsAny(raw, "$@") && !strings.Contains(raw, "#{")
	lx.out = append(lx.out, token{kind: kind, text: raw, val: raw, ok: ok})
}
