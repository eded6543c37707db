package redact

import (
	"bytes"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/evokore/evokore/internal/jsonenc"
	"github.com/evokore/evokore/internal/rawjson"
)

// maxRawDepth bounds the nesting rawArgs reads; deeper arguments (which
// no tool takes) go the decode path, which knows encoding/json's limit.
const maxRawDepth = 200

// rawArgs reads arguments in place and writes the bytes the decode path
// writes for them (decoded into a map, secret keys masked, every string
// scrubbed, encoded by json.Marshal: keys sorted, a duplicate key's last
// value, encoding/json's escapes, numbers as the float64 they decode
// to), with the texts held under secret keys for the answer's
// scrubber. Most calls hold no configured secret, so no string needs the
// replacers, and the arguments need neither a map nor reflection.
//
// ok is false whenever that promise cannot be kept cheaply, and the
// caller takes the decode path: a needle (a text a replacer replaces)
// anywhere in the arguments, input encoding/json would repair (invalid
// UTF-8, a lone surrogate escape) or refuse, a duplicate key, a number
// beyond float64, nesting deeper than maxRawDepth, anything but an
// object at the top.
func rawArgs(raw []byte, needles [][]byte) (out []byte, secrets []string, ok bool) {
	for _, n := range needles {
		if bytes.Contains(raw, n) {
			return nil, nil, false
		}
	}
	w := walkers.Get().(*walker)
	defer w.release()
	w.in, w.needles = raw, needles
	i := rawjson.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, nil, false
	}
	end, ok := w.value(i, false, 0)
	if !ok || rawjson.SkipSpace(raw, end) != len(raw) {
		return nil, nil, false
	}
	return bytes.Clone(w.out), w.secrets, true
}

// walker is the state of one rawArgs; walkers keeps them, so the scratch
// buffers of one call serve the next.
type walker struct {
	in      []byte
	needles [][]byte
	// out is the redacted arguments being written.
	out []byte
	// members are those of the objects being read, innermost last.
	members []member
	// text holds a string with escapes, decoded; moved an object's
	// members while they are put in order.
	text, moved []byte
	// secrets are the texts held under secret keys.
	secrets []string
}

// member is one member of an object: its name decoded and, unless the
// object is under a secret key, where it was written in out.
type member struct {
	key        []byte
	start, end int
}

var walkers = sync.Pool{New: func() any { return &walker{} }}

// release returns w to the pool, unless a huge call grew its buffers.
func (w *walker) release() {
	if cap(w.out) > 64<<10 || cap(w.text) > 64<<10 || cap(w.moved) > 64<<10 {
		return
	}
	clear(w.members[:cap(w.members)])
	*w = walker{out: w.out[:0], members: w.members[:0], text: w.text[:0], moved: w.moved[:0]}
	walkers.Put(w)
}

// value reads the value at in[i] and returns the index past it. Under a
// secret key (secret) it writes nothing and keeps the strings and
// numbers it holds.
func (w *walker) value(i int, secret bool, depth int) (int, bool) {
	if i >= len(w.in) {
		return 0, false
	}
	switch c := w.in[i]; c {
	case '{':
		return w.object(i, secret, depth)
	case '[':
		return w.array(i, secret, depth)
	case '"':
		return w.stringValue(i, secret)
	case 't':
		return w.literal(i, "true", secret)
	case 'f':
		return w.literal(i, "false", secret)
	case 'n':
		return w.literal(i, "null", secret)
	default:
		return w.number(i, secret)
	}
}

func (w *walker) literal(i int, lit string, secret bool) (int, bool) {
	end := i + len(lit)
	if end > len(w.in) || string(w.in[i:end]) != lit {
		return 0, false
	}
	if !secret {
		w.out = append(w.out, lit...)
	}
	return end, true
}

// object reads the object at in[i], writes its members in json.Marshal's
// order, and returns the index past it.
func (w *walker) object(i int, secret bool, depth int) (int, bool) {
	if depth >= maxRawDepth {
		return 0, false
	}
	start, base := len(w.out), len(w.members)
	defer func() { w.members = w.members[:base] }()
	if !secret {
		w.out = append(w.out, '{')
	}
	i = rawjson.SkipSpace(w.in, i+1)
	if i < len(w.in) && w.in[i] == '}' {
		if !secret {
			w.out = append(w.out, '}')
		}
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = w.member(i, secret, depth, base); !ok {
			return 0, false
		}
		i = rawjson.SkipSpace(w.in, i)
		if i >= len(w.in) {
			return 0, false
		}
		if w.in[i] == '}' {
			break
		}
		if w.in[i] != ',' {
			return 0, false
		}
		i = rawjson.SkipSpace(w.in, i+1)
	}
	if !w.order(base, start, secret) {
		return 0, false
	}
	if !secret {
		w.out = append(w.out, '}')
	}
	return i + 1, true
}

// member reads the member at in[i] of the object whose members begin at
// w.members[base]: its name, decoded, and its value, masked under a
// secret name. Unless the object is under a secret key it writes the
// member, after a comma when it is not the first. It returns the index
// past the value.
func (w *walker) member(i int, secret bool, depth, base int) (int, bool) {
	if i >= len(w.in) || w.in[i] != '"' {
		return 0, false
	}
	i0 := i
	end, esc, plain, ok := w.scanString(i)
	if !ok {
		return 0, false
	}
	key := w.in[i+1 : end-1]
	if esc {
		if key, ok = w.decode(key, nil); !ok {
			return 0, false
		}
	}
	i = rawjson.SkipSpace(w.in, end)
	if i >= len(w.in) || w.in[i] != ':' {
		return 0, false
	}
	i = rawjson.SkipSpace(w.in, i+1)
	hidden := secret || secretName(key)
	m := member{key: key}
	if !secret {
		if len(w.members) > base {
			w.out = append(w.out, ',')
		}
		m.start = len(w.out)
		if plain && !esc {
			w.out = append(w.out, w.in[i0:end]...)
		} else {
			w.out = jsonenc.String(w.out, key)
		}
		w.out = append(w.out, ':')
	}
	if i, ok = w.value(i, hidden, depth+1); !ok {
		return 0, false
	}
	if !secret {
		if hidden {
			w.out = append(w.out, `"`+Mask+`"`...)
		}
		m.end = len(w.out)
	}
	w.members = append(w.members, m)
	return i, true
}

// order puts the members of the object begun at out[start] in the order
// json.Marshal writes a map's keys (byte order of the decoded names).
// A repeated name fails: the decode path keeps the last value, and
// under a secret key that decides which texts are secrets.
func (w *walker) order(base, start int, secret bool) bool {
	ms := w.members[base:]
	sorted := true
	for k := 1; k < len(ms) && sorted; k++ {
		sorted = bytes.Compare(ms[k-1].key, ms[k].key) < 0
	}
	if sorted {
		return true
	}
	slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	for k := 1; k < len(ms); k++ {
		if bytes.Equal(ms[k-1].key, ms[k].key) {
			return false
		}
	}
	if secret {
		return true
	}
	w.moved = append(w.moved[:0], w.out[start:]...)
	w.out = w.out[:start+1]
	for k, m := range ms {
		if k > 0 {
			w.out = append(w.out, ',')
		}
		w.out = append(w.out, w.moved[m.start-start:m.end-start]...)
	}
	return true
}

func (w *walker) array(i int, secret bool, depth int) (int, bool) {
	if depth >= maxRawDepth {
		return 0, false
	}
	if !secret {
		w.out = append(w.out, '[')
	}
	i = rawjson.SkipSpace(w.in, i+1)
	if i < len(w.in) && w.in[i] == ']' {
		if !secret {
			w.out = append(w.out, ']')
		}
		return i + 1, true
	}
	for n := 0; ; n++ {
		if n > 0 && !secret {
			w.out = append(w.out, ',')
		}
		var ok bool
		if i, ok = w.value(i, secret, depth+1); !ok {
			return 0, false
		}
		i = rawjson.SkipSpace(w.in, i)
		if i >= len(w.in) {
			return 0, false
		}
		if w.in[i] == ']' {
			break
		}
		if w.in[i] != ',' {
			return 0, false
		}
		i = rawjson.SkipSpace(w.in, i+1)
	}
	if !secret {
		w.out = append(w.out, ']')
	}
	return i + 1, true
}

func (w *walker) stringValue(i int, secret bool) (int, bool) {
	end, esc, plain, ok := w.scanString(i)
	if !ok {
		return 0, false
	}
	text := w.in[i+1 : end-1]
	if esc {
		if w.text, ok = w.decode(text, w.text[:0]); !ok {
			return 0, false
		}
		text = w.text
		// The needles were looked for in the raw arguments; an escape
		// may have hidden one there.
		for _, n := range w.needles {
			if bytes.Contains(text, n) {
				return 0, false
			}
		}
	}
	switch {
	case secret:
		w.secrets = append(w.secrets, string(text))
	case plain && !esc:
		w.out = append(w.out, w.in[i:end]...)
	default:
		w.out = jsonenc.String(w.out, text)
	}
	return end, true
}

// scanString checks the string token at in[i] and returns the index
// past it; esc says it holds escapes, plain that json.Marshal would
// write its unescaped text unchanged (see jsonenc.Plain). Invalid UTF-8
// fails: decoding would replace it.
func (w *walker) scanString(i int) (end int, esc, plain, ok bool) {
	plain = true
	for j := i + 1; j < len(w.in); {
		c := w.in[j]
		switch {
		case c == '"':
			return j + 1, esc, plain, true
		case c == '\\':
			esc = true
			if j+1 >= len(w.in) {
				return 0, false, false, false
			}
			switch w.in[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if _, ok := rawjson.Hex4(w.in, j+2); !ok {
					return 0, false, false, false
				}
				j += 6
			default:
				return 0, false, false, false
			}
		case c < 0x20:
			return 0, false, false, false
		case c < utf8.RuneSelf:
			if c == '<' || c == '>' || c == '&' {
				plain = false
			}
			j++
		default:
			r, size := utf8.DecodeRune(w.in[j:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, false, false
			}
			if r == '\u2028' || r == '\u2029' {
				plain = false
			}
			j += size
		}
	}
	return 0, false, false, false
}

// decode appends the text of a checked string body with escapes to dst.
// A surrogate escape that is not half of a pair fails: decoding would
// make it U+FFFD.
func (w *walker) decode(s, dst []byte) ([]byte, bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		switch s[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := rawjson.Hex4(s, i+2)
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
					return nil, false
				}
				lo, _ := rawjson.Hex4(s, i+2)
				if r = utf16.DecodeRune(r, lo); r == utf8.RuneError {
					return nil, false
				}
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, s[i+1])
		}
		i += 2
	}
	return dst, true
}

// number reads a number: one that json.Marshal writes as it stands (an
// integer of at most 15 digits) is copied, any other is written as the
// float64 it decodes to.
func (w *walker) number(i int, secret bool) (int, bool) {
	j, simple := numberEnd(w.in, i)
	if j < 0 {
		return 0, false
	}
	lit := w.in[i:j]
	if !simple {
		f, err := strconv.ParseFloat(string(lit), 64)
		if err != nil {
			return 0, false
		}
		var buf [32]byte
		var ok bool
		if lit, ok = jsonenc.Float(buf[:0], f); !ok {
			return 0, false
		}
	}
	if secret {
		w.secrets = append(w.secrets, string(lit))
	} else {
		w.out = append(w.out, lit...)
	}
	return j, true
}

// numberEnd returns the index past the JSON number at in[i], -1 when
// there is none, and whether it is simple: an integer of at most 15
// characters other than -0, which json.Marshal writes back unchanged.
func numberEnd(in []byte, i int) (end int, simple bool) {
	j := i
	if j < len(in) && in[j] == '-' {
		j++
	}
	switch {
	case j < len(in) && in[j] == '0':
		j++
	case j < len(in) && '1' <= in[j] && in[j] <= '9':
		for j < len(in) && '0' <= in[j] && in[j] <= '9' {
			j++
		}
	default:
		return -1, false
	}
	simple = j-i <= 15 && string(in[i:j]) != "-0"
	if j < len(in) && in[j] == '.' {
		simple = false
		if j = digits(in, j+1); j < 0 {
			return -1, false
		}
	}
	if j < len(in) && (in[j] == 'e' || in[j] == 'E') {
		simple = false
		j++
		if j < len(in) && (in[j] == '+' || in[j] == '-') {
			j++
		}
		if j = digits(in, j); j < 0 {
			return -1, false
		}
	}
	return j, simple
}

// digits returns the index past the digits at b[i:], at least one; -1
// when there are none.
func digits(b []byte, i int) int {
	j := i
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
