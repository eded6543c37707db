package connect

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
)

// Hidden replaces a secret's value wherever connect shows a file.
const Hidden = `<hidden>`

// secretKeys name the sections whose values are secrets: a server's
// environment and its HTTP headers.
var secretKeys = map[string]bool{"env": true, "headers": true, "http_headers": true}

// reference is a value that only names a variable; it is shown.
var reference = regexp.MustCompile(`^\$\{[^}]+\}$`)

// Mask returns a client or config file with the values of every env and
// headers entry replaced by <hidden>, unless the value only references a
// variable (${VAR}): connect's output names servers and keys, never a
// secret. A file it cannot read is returned as it is.
func Mask(data []byte) []byte {
	if d, err := parseJSONDoc(data); err == nil && len(bytes.TrimSpace(data)) > 0 {
		return maskJSON(d)
	}
	return maskTOML(data)
}

type span struct{ from, to int }

func maskJSON(d *jsonDoc) []byte {
	var spans []span
	var walk func(o object, secret bool)
	walk = func(o object, secret bool) {
		for _, m := range o.members {
			switch d.plain[m.valStart] {
			case '{':
				if inner, err := d.objectAt(m.valStart); err == nil {
					walk(inner, secretKeys[m.name])
				}
			case '"':
				if secret && !reference.Match(d.plain[m.valStart+1:m.valEnd-1]) {
					spans = append(spans, span{m.valStart, m.valEnd})
				}
			}
		}
	}
	root, err := d.root()
	if err != nil {
		return d.data
	}
	walk(root, false)
	out := bytes.Clone(d.data)
	slices.SortFunc(spans, func(a, b span) int { return b.from - a.from })
	for _, s := range spans {
		out = append(out[:s.from], append([]byte(`"`+Hidden+`"`), out[s.to:]...)...)
	}
	return out
}

var (
	tomlHeader = regexp.MustCompile(`^\s*\[\s*([^\]]+?)\s*\]`)
	tomlPair   = regexp.MustCompile(`^(\s*[^=#\s][^=]*?\s*=\s*)(.*)$`)
	tomlString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'[^']*'`)
)

// maskTOML masks Codex's secret values line by line: the pairs of an
// env or http_headers table, inline env = { ... } tables, and
// bearer_token.
func maskTOML(data []byte) []byte {
	lines := strings.SplitAfter(string(data), "\n")
	secret := false
	for i, line := range lines {
		l := strings.TrimRight(line, "\r\n")
		eol := line[len(l):]
		if m := tomlHeader.FindStringSubmatch(l); m != nil {
			parts := strings.Split(m[1], ".")
			secret = secretKeys[strings.Trim(strings.TrimSpace(parts[len(parts)-1]), `"'`)]
			continue
		}
		m := tomlPair.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		key := strings.Trim(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[1]), "=")), `"'`)
		if k := strings.LastIndexByte(key, '.'); k >= 0 {
			key = key[k+1:]
		}
		if secret || secretKeys[key] || key == "bearer_token" {
			lines[i] = m[1] + tomlString.ReplaceAllStringFunc(m[2], func(s string) string {
				if reference.MatchString(s[1 : len(s)-1]) {
					return s
				}
				return `"` + Hidden + `"`
			}) + eol
		}
	}
	return []byte(strings.Join(lines, ""))
}
