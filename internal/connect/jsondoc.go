package connect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// A client's JSON file is edited in place: the members evokore adds or
// removes are spliced into the text, and every other byte (the other
// keys, their order, the indentation, even comments in a JSONC file such
// as VS Code's) stays as it was. Re-encoding the document through a map
// would sort the keys of a ~/.claude.json that Claude Code rewrites with
// its own order, and drop comments.

// member is one "name": value pair of an object, located in the text.
type member struct {
	name             string
	keyStart         int // the key's opening quote
	keyEnd           int // just past the key's closing quote
	valStart, valEnd int
}

// object is a JSON object located in the text: offsets of its braces and
// its members in order.
type object struct {
	open, close int
	members     []member
}

func (o object) find(name string) (int, bool) {
	for i, m := range o.members {
		if m.name == name {
			return i, true
		}
	}
	return -1, false
}

// jsonDoc is the text of a JSON (or JSONC) file.
type jsonDoc struct {
	data []byte
	// plain is data with comments and trailing commas blanked to spaces,
	// so offsets in one are offsets in the other.
	plain []byte
}

func parseJSONDoc(data []byte) (*jsonDoc, error) {
	d := &jsonDoc{data: data}
	if len(bytes.TrimSpace(data)) == 0 {
		d.data = []byte("{}\n")
	}
	d.plain = blankJSONC(d.data)
	if !json.Valid(d.plain) {
		var v any
		err := json.Unmarshal(d.plain, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, at(int(se.Offset)-1, "not valid JSON: %v", se)
		}
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if _, err := d.root(); err != nil {
		return nil, err
	}
	return d, nil
}

// unaccepted is the first comment or trailing comma in the file that a
// client reading it does not accept, or nil.
func (d *jsonDoc) unaccepted(comments, trailingCommas bool) error {
	_, extras := scanJSONC(d.data)
	for _, e := range extras {
		switch {
		case d.data[e] == ',' && !trailingCommas:
			return at(e, "a trailing comma")
		case d.data[e] == '/' && !comments:
			return at(e, "a comment")
		}
	}
	return nil
}

// root is the top-level object.
func (d *jsonDoc) root() (object, error) {
	i := skipSpace(d.plain, 0)
	if i >= len(d.plain) || d.plain[i] != '{' {
		return object{}, errors.New("the file is not a JSON object")
	}
	return d.objectAt(i)
}

// objectAt reads the object whose '{' is at i.
func (d *jsonDoc) objectAt(i int) (object, error) {
	p := d.plain
	o := object{open: i}
	i = skipSpace(p, i+1)
	for i < len(p) && p[i] != '}' {
		if p[i] == ',' {
			i = skipSpace(p, i+1)
			continue
		}
		if p[i] != '"' {
			return o, fmt.Errorf("offset %d: expected a key", i)
		}
		end := skipString(p, i)
		var name string
		if err := json.Unmarshal(p[i:end], &name); err != nil {
			return o, err
		}
		j := skipSpace(p, end)
		if j >= len(p) || p[j] != ':' {
			return o, fmt.Errorf("offset %d: expected ':'", j)
		}
		j = skipSpace(p, j+1)
		vend := skipValue(p, j)
		o.members = append(o.members, member{name: name, keyStart: i, keyEnd: end, valStart: j, valEnd: vend})
		i = skipSpace(p, vend)
	}
	if i >= len(p) {
		return o, errors.New("unterminated object")
	}
	o.close = i
	return o, nil
}

// objectPath finds the object at path from the root; ok is false when a
// key is absent. A key that holds something other than an object is an
// error.
func (d *jsonDoc) objectPath(path ...string) (o object, ok bool, err error) {
	o, err = d.root()
	if err != nil {
		return o, false, err
	}
	for _, k := range path {
		i, found := o.find(k)
		if !found {
			return o, false, nil
		}
		m := o.members[i]
		if d.plain[m.valStart] != '{' {
			return o, false, fmt.Errorf("%q is not an object", k)
		}
		if o, err = d.objectAt(m.valStart); err != nil {
			return o, false, err
		}
	}
	return o, true, nil
}

// value is a member's value as written.
func (d *jsonDoc) value(m member) []byte { return d.data[m.valStart:m.valEnd] }

// splice replaces data[from:to] with text.
func (d *jsonDoc) splice(from, to int, text string) {
	out := make([]byte, 0, len(d.data)-(to-from)+len(text))
	out = append(out, d.data[:from]...)
	out = append(out, text...)
	out = append(out, d.data[to:]...)
	d.data = out
	d.plain = blankJSONC(out)
}

// remove deletes member i of o with the separator that goes with it.
func (d *jsonDoc) remove(o object, i int) {
	ms := o.members
	switch {
	case len(ms) == 1:
		d.splice(o.open+1, o.close, "")
	case i+1 < len(ms):
		d.splice(ms[i].keyStart, ms[i+1].keyStart, "")
	default:
		d.splice(ms[i-1].valEnd, ms[i].valEnd, "")
	}
}

// layout is how an object's members are written.
type layout struct {
	lead  string // between '{' or ',' and a key: "\n    ", " " or ""
	colon string // between a key and its value: ": " or ":"
	inner string // the members' indentation, "" when on one line
	unit  string // one level of indentation in this file
	outer string // the indentation of the line holding the '}'
}

func (d *jsonDoc) layoutOf(o object) layout {
	unit := d.indentUnit()
	outer := lineIndent(d.data, o.close)
	l := layout{colon: ": ", unit: unit, outer: outer}
	if len(o.members) > 0 {
		first := o.members[0]
		l.lead = string(d.plain[o.open+1 : first.keyStart])
		l.colon = string(d.data[first.keyEnd:first.valStart])
		if k := bytes.LastIndexByte([]byte(l.lead), '\n'); k >= 0 {
			l.inner = l.lead[k+1:]
			l.lead = "\n" + l.inner
		}
		return l
	}
	// An empty object: follow the file's style.
	if bytes.Contains(bytes.TrimSpace(d.data), []byte("\n")) {
		open := lineLead(d.data, o.open)
		l.inner = open + unit
		l.outer = open
		l.lead = "\n" + l.inner
	} else {
		l.colon = ":"
	}
	return l
}

// indentUnit is the indentation of the root's first member, or two
// spaces.
func (d *jsonDoc) indentUnit() string {
	o, err := d.root()
	if err != nil || len(o.members) == 0 {
		return "  "
	}
	ind := lineIndent(d.data, o.members[0].keyStart)
	if ind == "" || bytes.IndexByte(d.data[o.open:o.members[0].keyStart], '\n') < 0 {
		return "  "
	}
	return ind
}

// add appends a member to o. value is compact JSON, rendered in the
// object's layout; raw, when set, is inserted exactly as given instead
// (a value restored as it was written).
func (d *jsonDoc) add(o object, name string, value []byte, raw bool) {
	l := d.layoutOf(o)
	key, _ := json.Marshal(name)
	text := value
	if !raw {
		text = render(value, l.inner, l.unit)
	}
	member := l.lead + string(key) + l.colon + string(text)
	if len(o.members) == 0 {
		closing := ""
		if l.inner != "" {
			closing = "\n" + l.outer
		}
		d.splice(o.open+1, o.close, member+closing)
		return
	}
	last := o.members[len(o.members)-1]
	d.splice(last.valEnd, last.valEnd, ","+member)
}

// insert puts a member, its value as written, before member i of o.
func (d *jsonDoc) insert(o object, i int, name, raw string) {
	l := d.layoutOf(o)
	key, _ := json.Marshal(name)
	d.splice(o.members[i].keyStart, o.members[i].keyStart, string(key)+l.colon+raw+","+l.lead)
}

// set replaces member i's value (compact JSON, rendered in o's layout).
func (d *jsonDoc) set(o object, i int, value []byte) {
	l := d.layoutOf(o)
	m := o.members[i]
	d.splice(m.valStart, m.valEnd, string(render(value, lineLead(d.data, m.keyStart), l.unit)))
}

// render indents compact JSON for a member whose line starts with
// indent; with no indent it stays compact.
func render(value []byte, indent, unit string) []byte {
	if indent == "" && unit == "" {
		return value
	}
	var b bytes.Buffer
	if indent == "" {
		if err := json.Compact(&b, value); err != nil {
			return value
		}
		return b.Bytes()
	}
	if err := json.Indent(&b, value, indent, unit); err != nil {
		return value
	}
	return b.Bytes()
}

// lineIndent is the run of spaces and tabs that starts the line holding
// offset i, when only such characters stand before i on that line.
func lineIndent(data []byte, i int) string {
	start := bytes.LastIndexByte(data[:i], '\n') + 1
	ind := data[start:i]
	for _, c := range ind {
		if c != ' ' && c != '\t' {
			return ""
		}
	}
	return string(ind)
}

// lineLead is the run of spaces and tabs that starts the line holding
// offset i.
func lineLead(data []byte, i int) string {
	start := bytes.LastIndexByte(data[:i], '\n') + 1
	end := start
	for end < i && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

func skipSpace(p []byte, i int) int {
	for i < len(p) && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset just past the string starting at i.
func skipString(p []byte, i int) int {
	for i++; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(p)
}

// skipValue returns the offset just past the (valid) value starting at i.
func skipValue(p []byte, i int) int {
	switch p[i] {
	case '"':
		return skipString(p, i)
	case '{', '[':
		depth := 0
		for ; i < len(p); i++ {
			switch p[i] {
			case '"':
				i = skipString(p, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(p)
	}
	for i < len(p) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(p[i])) {
		i++
	}
	return i
}

// blankJSONC returns a copy of data with // and /* */ comments and
// trailing commas replaced by spaces (newlines kept), so a JSONC file
// parses as JSON at the same offsets.
func blankJSONC(data []byte) []byte {
	p, _ := scanJSONC(data)
	return p
}

// scanJSONC is blankJSONC that also returns where each comment and
// trailing comma it blanked began, in file order.
func scanJSONC(data []byte) (plain []byte, extras []int) {
	p := bytes.Clone(data)
	lastComma := -1
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"':
			i = skipString(p, i) - 1
			lastComma = -1
		case c == '/' && i+1 < len(p) && p[i+1] == '/':
			extras = append(extras, i)
			for ; i < len(p) && p[i] != '\n'; i++ {
				p[i] = ' '
			}
		case c == '/' && i+1 < len(p) && p[i+1] == '*':
			extras = append(extras, i)
			j := bytes.Index(p[i+2:], []byte("*/"))
			end := len(p)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			for ; i < end; i++ {
				if p[i] != '\n' {
					p[i] = ' '
				}
			}
			i--
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				p[lastComma] = ' '
				extras = append(extras, lastComma)
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			lastComma = -1
		}
	}
	slices.Sort(extras)
	return p, extras
}
