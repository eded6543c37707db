package connect

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/evokore/evokore/internal/redact"
)

// Hidden replaces a secret wherever connect shows a file.
const Hidden = `<hidden>`

// A dry run prints a diff of whole files, context lines included, so
// everything a client's file may hold is masked, not only the servers:
// ~/.claude.json keeps an API key at its top level. The rules are eager,
// as package redact's are, because a secret printed cannot be taken
// back:
//
//   - every value of an env or headers table, and every string or
//     number under a key that names a secret (redact.SecretKey:
//     primaryApiKey, token, password, oauth…), at any depth;
//   - inside any other string (arguments, comments): the value of a
//     secret-named flag or assignment (--token=…, API_KEY=… in sh -c),
//     of a secret-named header (Authorization: …), a bearer token, and a
//     URL's user and query values;
//   - in a list, the argument after a secret-named flag (--api-key X).
//
// A value that only refers to a variable (${NAME}, $NAME, ${env:NAME},
// "Bearer ${NAME}") shows no secret and is shown; one with a default
// (${NAME:-value}) is not.

// secretSections name the tables whose values are all secrets: a
// server's environment and its HTTP headers.
var secretSections = map[string]bool{"env": true, "headers": true, "http_headers": true}

var (
	// anyRef is a reference in any client's syntax (${NAME}, $NAME,
	// ${env:NAME}, ${input:id}), never one with a default, which may be
	// a secret (${KEY:-sk-…}).
	anyRef     = regexp.MustCompile(`\$\{(?:[A-Za-z_]+:)?[A-Za-z_][A-Za-z0-9_.-]*\}|\$[A-Za-z_][A-Za-z0-9_]*`)
	authScheme = regexp.MustCompile(`(?i)^(bearer|basic|token|bot)?$`)
	urlText    = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)
	assignment = regexp.MustCompile(`(^|[\s'"(;&|,#])(-{0,2}[A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*("[^"]*"|'[^']*'|[^\s'";&|]+)`)
	spacedFlag = regexp.MustCompile(`(^|\s)(--?[A-Za-z][A-Za-z0-9_.-]*)(\s+)([^\s-][^\s'"]*)`)
	header     = regexp.MustCompile(`(^|[\s'"])([A-Za-z][A-Za-z0-9_-]*)(\s*:\s*)([^\n]+)`)
	bearer     = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{6,})`)
	flagOnly   = regexp.MustCompile(`^--?[A-Za-z][A-Za-z0-9_.-]*$`)
	numberText = regexp.MustCompile(`^[+-]?[0-9][0-9_.eE+-]*$`)
)

// shown reports whether a secret's value may be shown: it only refers
// to variables, maybe after an auth scheme.
func shown(v string) bool {
	if !anyRef.MatchString(v) {
		return false
	}
	return authScheme.MatchString(strings.TrimSpace(anyRef.ReplaceAllString(v, "")))
}

// secretName is redact.SecretKey for a flag or key, except a name that
// names a variable (Codex's bearer_token_env_var): it holds no secret.
func secretName(name string) bool {
	name = strings.TrimLeft(name, "-")
	if strings.HasSuffix(strings.ToLower(name), "env_var") || strings.HasSuffix(name, "EnvVar") {
		return false
	}
	return redact.SecretKey(name)
}

// scrub hides the secrets inside one text that is not itself a secret's
// value.
func scrub(s string) string {
	s = urlText.ReplaceAllStringFunc(s, scrubURL)
	s = replaceGroup(assignment, s, 2, 3, func(name, v string) bool { return secretName(name) && v != Hidden && !shown(strings.Trim(v, `"'`)) })
	s = replaceGroup(spacedFlag, s, 2, 4, func(name, v string) bool { return secretName(name) && !shown(v) })
	s = replaceGroup(header, s, 2, 4, func(name, v string) bool { return secretName(name) && v != Hidden && !shown(v) })
	s = replaceGroup(bearer, s, 1, 3, func(_, v string) bool { return !shown(v) && v != Hidden })
	return s
}

// replaceGroup replaces group val of each match of re by Hidden where
// hide says so, given group name.
func replaceGroup(re *regexp.Regexp, s string, name, val int, hide func(name, v string) bool) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		if !hide(s[m[2*name]:m[2*name+1]], s[m[2*val]:m[2*val+1]]) {
			continue
		}
		b.WriteString(s[last:m[2*val]])
		b.WriteString(Hidden)
		last = m[2*val+1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// scrubURL hides a URL's user (and password) and its query values.
func scrubURL(u string) string {
	scheme, rest, _ := strings.Cut(u, "://")
	auth := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		auth = rest[:i]
	}
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		user, _, hasPass := strings.Cut(auth[:at], ":")
		switch {
		case shown(auth[:at]):
		case hasPass:
			rest = user + ":" + Hidden + rest[at:]
		default:
			rest = Hidden + rest[at:]
		}
	}
	q := strings.IndexByte(rest, '?')
	if q < 0 {
		return scheme + "://" + rest
	}
	query, frag, hasFrag := strings.Cut(rest[q+1:], "#")
	pairs := strings.Split(query, "&")
	for i, p := range pairs {
		if k, v, ok := strings.Cut(p, "="); ok && v != "" && !shown(v) {
			pairs[i] = k + "=" + Hidden
		}
	}
	out := scheme + "://" + rest[:q+1] + strings.Join(pairs, "&")
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// Mask returns a client or config file with every secret it may hold
// replaced by <hidden> (see above). A file it cannot read as JSON is
// masked as TOML.
func Mask(data []byte) []byte {
	if d, err := parseJSONDoc(data); err == nil && len(strings.TrimSpace(string(data))) > 0 {
		return maskJSON(d)
	}
	return maskTOML(data)
}

// edit replaces data[from:to] with text.
type edit struct {
	from, to int
	text     string
}

func applyEdits(data []byte, edits []edit) []byte {
	slices.SortFunc(edits, func(a, b edit) int { return b.from - a.from })
	out := slices.Clone(data)
	for _, e := range edits {
		out = append(out[:e.from], append([]byte(e.text), out[e.to:]...)...)
	}
	return out
}

// jsonMasker collects the edits that mask a JSON document.
type jsonMasker struct {
	d     *jsonDoc
	edits []edit
}

func maskJSON(d *jsonDoc) []byte {
	m := &jsonMasker{d: d}
	root, err := d.root()
	if err != nil {
		return d.data
	}
	m.object(root, false)
	m.comments()
	return applyEdits(d.data, m.edits)
}

// object masks an object's members; secret is set for the members of
// an env or headers table.
func (m *jsonMasker) object(o object, secret bool) {
	for _, mem := range o.members {
		switch {
		case secret || secretName(mem.name):
			m.hideAll(mem.valStart)
		default:
			m.value(mem.valStart, secretSections[mem.name])
		}
	}
}

// value masks the value at i: with secret, its members are secrets.
func (m *jsonMasker) value(i int, secret bool) {
	p := m.d.plain
	switch p[i] {
	case '{':
		if o, err := m.d.objectAt(i); err == nil {
			m.object(o, secret)
		}
	case '[':
		m.array(i)
	case '"':
		m.text(i, scrub)
	}
}

// array masks a list's strings and the argument after a secret flag.
func (m *jsonMasker) array(i int) {
	afterFlag := false
	for _, e := range m.d.elements(i) {
		s, isString := m.d.stringAt(e)
		switch {
		case afterFlag && isString && !strings.HasPrefix(s, "-") && !shown(s):
			m.edits = append(m.edits, edit{e, skipValue(m.d.plain, e), `"` + Hidden + `"`})
		default:
			m.value(e, false)
		}
		afterFlag = isString && flagOnly.MatchString(s) && secretName(s)
	}
}

// hideAll hides every string and number of the value at i, except
// references.
func (m *jsonMasker) hideAll(i int) {
	p := m.d.plain
	switch p[i] {
	case '{':
		if o, err := m.d.objectAt(i); err == nil {
			for _, mem := range o.members {
				m.hideAll(mem.valStart)
			}
		}
	case '[':
		for _, e := range m.d.elements(i) {
			m.hideAll(e)
		}
	case '"':
		m.text(i, func(s string) string {
			if shown(s) {
				return s
			}
			return Hidden
		})
	case 't', 'f', 'n':
	default:
		m.edits = append(m.edits, edit{i, skipValue(p, i), `"` + Hidden + `"`})
	}
}

// text rewrites the string at i with fn, when that changes it.
func (m *jsonMasker) text(i int, fn func(string) string) {
	s, ok := m.d.stringAt(i)
	if !ok {
		return
	}
	if t := fn(s); t != s {
		m.edits = append(m.edits, edit{i, skipString(m.d.plain, i), string(compactJSON(t))})
	}
}

// comments scrubs the text of a JSONC file's comments.
func (m *jsonMasker) comments() {
	data := m.d.data
	_, extras := scanJSONC(data)
	for _, i := range extras {
		if data[i] != '/' {
			continue
		}
		end := len(data)
		if data[i+1] == '/' {
			if nl := strings.IndexByte(string(data[i:]), '\n'); nl >= 0 {
				end = i + nl
			}
		} else if j := strings.Index(string(data[i+2:]), "*/"); j >= 0 {
			end = i + 2 + j
		}
		if t := scrub(string(data[i:end])); t != string(data[i:end]) {
			m.edits = append(m.edits, edit{i, end, t})
		}
	}
}

// stringAt decodes the string at offset i.
func (d *jsonDoc) stringAt(i int) (string, bool) {
	if d.plain[i] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(d.plain[i:skipString(d.plain, i)], &s) != nil {
		return "", false
	}
	return s, true
}

var tomlHeader = regexp.MustCompile(`^\s*\[\[?\s*([^\]]+?)\s*\]\]?`)

// tomlMasker masks Codex's file line by line. A value may span lines
// (an array), so the state of the key being read carries over until the
// next key or table.
type tomlMasker struct {
	// table is set inside an env or http_headers table, or a table
	// whose name names a secret; value while reading a secret's value.
	table, value bool
	// afterFlag is set after a secret-named flag in a list.
	afterFlag bool
}

func maskTOML(data []byte) []byte {
	lines := strings.SplitAfter(string(data), "\n")
	var m tomlMasker
	for i, line := range lines {
		lines[i] = m.line(line)
	}
	return []byte(strings.Join(lines, ""))
}

// lastKey is the last part of a dotted TOML key, unquoted.
func lastKey(k string) string {
	k = strings.TrimSpace(k)
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		k = k[i+1:]
	}
	return strings.Trim(strings.TrimSpace(k), `"'`)
}

func (m *tomlMasker) line(line string) string {
	if h := tomlHeader.FindStringSubmatch(line); h != nil {
		name := lastKey(h[1])
		m.table = secretSections[name] || secretName(name)
		m.value, m.afterFlag = m.table, false
		return line
	}
	code, comment := splitComment(line)
	if eq := keyEnd(code); eq >= 0 {
		name := lastKey(code[:eq])
		m.value = m.table || secretName(name)
		for _, part := range strings.Split(code[:eq], ".") {
			m.value = m.value || secretSections[strings.Trim(strings.TrimSpace(part), `"'`)]
		}
		m.afterFlag = false
		return code[:eq+1] + m.values(code[eq+1:]) + scrub(comment)
	}
	return m.values(code) + scrub(comment)
}

// values masks the strings (and, of a secret, the numbers) of a value.
func (m *tomlMasker) values(v string) string {
	if m.value && numberText.MatchString(strings.TrimSpace(v)) {
		return strings.Replace(v, strings.TrimSpace(v), `"`+Hidden+`"`, 1)
	}
	var b strings.Builder
	toks := tomlTokens(v)
	for i, tok := range toks {
		isKey := i+1 < len(toks) && strings.HasPrefix(strings.TrimSpace(toks[i+1]), "=")
		if isKey || (tok[0] != '"' && tok[0] != '\'') {
			b.WriteString(tok)
			continue
		}
		b.WriteString(m.token(tok))
	}
	return b.String()
}

// token masks one TOML string.
func (m *tomlMasker) token(tok string) string {
	s := tok[1 : len(tok)-1]
	if tok[0] == '"' {
		if json.Unmarshal([]byte(tok), &s) != nil {
			s = tok[1 : len(tok)-1]
		}
	}
	var t string
	switch {
	case m.value || (m.afterFlag && !strings.HasPrefix(s, "-")):
		t = Hidden
		if shown(s) {
			t = s
		}
	default:
		t = scrub(s)
	}
	m.afterFlag = flagOnly.MatchString(s) && secretName(s)
	if t == s {
		return tok
	}
	return string(compactJSON(t))
}

// splitComment cuts a line at a # outside strings.
func splitComment(line string) (code, comment string) {
	for _, tok := range tomlTokens(line) {
		if strings.HasPrefix(tok, "#") {
			return line[:len(line)-len(tok)], tok
		}
	}
	return line, ""
}

// keyEnd is the index of the = after a line's key, or -1 for a line
// that continues a value.
func keyEnd(code string) int {
	toks := tomlTokens(code)
	n := 0
	for _, tok := range toks {
		if tok[0] != '"' && tok[0] != '\'' {
			if i := strings.IndexAny(tok, "=[{,]}"); i >= 0 {
				if tok[i] == '=' {
					return n + i
				}
				return -1
			}
		}
		n += len(tok)
	}
	return -1
}

// tomlTokens splits a line into its strings ("…" with escapes, '…'),
// a comment (# to the end) and the text between them.
func tomlTokens(line string) []string {
	var out []string
	start := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '"', '\'':
			end := stringEnd(line, i)
			out = appendToken(out, line[start:i])
			out = append(out, line[i:end])
			start, i = end, end-1
		case '#':
			return append(appendToken(out, line[start:i]), line[i:])
		}
	}
	return appendToken(out, line[start:])
}

func appendToken(out []string, tok string) []string {
	if tok == "" {
		return out
	}
	return append(out, tok)
}

// stringEnd is the index past the TOML string opening at i (or the
// line's end when it is not closed there).
func stringEnd(line string, i int) int {
	q := line[i]
	for j := i + 1; j < len(line); j++ {
		switch {
		case line[j] == '\\' && q == '"':
			j++
		case line[j] == q:
			return j + 1
		}
	}
	return len(line)
}
