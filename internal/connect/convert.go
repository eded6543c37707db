package connect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// evokoreKeys are the keys of a server entry evokore's config accepts;
// a client's entry that uses only these moves over as written, its
// variable references rewritten (see translatedKeys).
var evokoreKeys = map[string]bool{
	"transport": true, "type": true, "command": true, "args": true, "env": true, "cwd": true,
	"inheritEnv": true, "url": true, "headers": true, "disabled": true, "description": true,
	"timeouts": true, "rateLimit": true, "cooldownMs": true, "pinning": true, "pinNewTools": true, "prefix": true,
}

// translatedKeys hold what a child's process or connection is made of,
// where a client's variable references are rewritten as evokore's.
var translatedKeys = map[string]bool{"command": true, "args": true, "env": true, "cwd": true, "url": true, "headers": true,
	"httpUrl": true, "serverUrl": true}

// oauthKeys are the keys under which each client keeps a remote
// server's OAuth client settings.
var oauthKeys = map[string]map[string]bool{
	"claude-code": {"oauth": true},
	"gemini":      {"oauth": true, "authProviderType": true},
	"cursor":      {"auth": true},
}

// oauthNames are the clients' names of the OAuth client settings, as
// evokore's oauth object spells them; "" is a setting that carries
// nothing once imported.
var oauthNames = map[string]string{
	"clientId": "clientId", "CLIENT_ID": "clientId",
	"clientSecret": "clientSecret", "CLIENT_SECRET": "clientSecret",
	"scopes": "scopes", "callbackPort": "callbackPort",
	"enabled": "",
}

// jsonConversion builds the evokore entry of one server of a client's
// JSON file. Errors carry the offset in that file of what they refuse.
type jsonConversion struct {
	c     Client
	d     *jsonDoc
	out   *jsonDoc
	typed bool
	// oauth is the client's OAuth client settings, as evokore's; off
	// is set when the client turned them off.
	oauth map[string]any
	off   bool
}

// convertJSON turns the client's entry at offset i of d into an evokore
// server entry (compact JSON). Keys other clients spell differently are
// renamed; a key with no equivalent refuses the entry, so nothing the
// user configured is dropped without a word.
func convertJSON(c Client, d *jsonDoc, i int) ([]byte, error) {
	if d.plain[i] != '{' {
		return nil, at(i, "it is not an object")
	}
	o, err := d.objectAt(i)
	if err != nil {
		return nil, err
	}
	cv := &jsonConversion{c: c, d: d, out: &jsonDoc{data: []byte("{}"), plain: []byte("{}")}}
	for _, m := range o.members {
		cv.typed = cv.typed || m.name == "type" || m.name == "transport"
	}
	for _, m := range o.members {
		if err := cv.member(m); err != nil {
			return nil, err
		}
	}
	cv.settleTransport()
	if cv.oauth != nil && !cv.off {
		cv.put("oauth", compactJSON(cv.oauth))
	}
	return cv.out.data, nil
}

func (cv *jsonConversion) put(k string, v []byte) {
	r, _ := cv.out.root()
	cv.out.add(r, k, compactValue(v), false)
}

func (cv *jsonConversion) member(m member) error {
	switch {
	case translatedKeys[m.name]:
		v, err := cv.d.translated(cv.c.vars, m.valStart, m.name)
		if err != nil {
			return err
		}
		cv.putTranslated(m.name, v)
	case evokoreKeys[m.name] || strings.HasPrefix(m.name, "x-"):
		cv.put(m.name, cv.d.plain[m.valStart:m.valEnd])
	case m.name == "timeout" && cv.c.Name == "gemini":
		cv.put("timeouts", []byte(`{"requestMs":`+string(compactValue(cv.d.plain[m.valStart:m.valEnd]))+`}`))
	case oauthKeys[cv.c.Name][m.name]:
		return cv.oauthSettings(m)
	default:
		return at(m.keyStart, "its key '%s' has no equivalent in evokore's config", m.name)
	}
	return nil
}

// putTranslated puts a translated value; Gemini's httpUrl and
// Windsurf's serverUrl are a streamable HTTP address.
func (cv *jsonConversion) putTranslated(k string, v []byte) {
	if k != "httpUrl" && k != "serverUrl" {
		cv.put(k, v)
		return
	}
	cv.put("url", v)
	if !cv.typed {
		cv.put("type", []byte(`"http"`))
		cv.typed = true
	}
}

// settleTransport types an entry that has a url and no type, as Cursor
// and Claude Desktop write a remote server: evokore would take it for a
// stdio server with no command. Gemini's url is the older SSE
// transport; elsewhere a url whose path ends in /sse is SSE and any
// other is streamable HTTP.
func (cv *jsonConversion) settleTransport() {
	o, _ := cv.out.root()
	_, hasCommand := o.find("command")
	i, hasURL := o.find("url")
	if cv.typed || !hasURL || hasCommand {
		return
	}
	var raw string
	_ = json.Unmarshal(cv.out.plain[o.members[i].valStart:o.members[i].valEnd], &raw)
	typ := "http"
	if u, err := url.Parse(raw); cv.c.Name == "gemini" || (err == nil && strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/sse")) {
		typ = "sse"
	}
	cv.put("type", compactJSON(typ))
}

// oauthSettings reads a client's OAuth client settings (Claude Code's
// and Gemini's oauth, Cursor's auth, Gemini's authProviderType) into
// evokore's oauth object: client id, client secret as a ${VAR}, scopes
// and callback port. Whether evokore's config takes them is decided
// with its schema when the entry is imported.
func (cv *jsonConversion) oauthSettings(m member) error {
	raw := cv.d.plain[m.valStart:m.valEnd]
	if cv.oauth == nil {
		cv.oauth = map[string]any{}
	}
	if m.name == "authProviderType" {
		var t string
		if json.Unmarshal(raw, &t) != nil || t != "dynamic_discovery" {
			return at(m.valStart, "its authProviderType %s has no equivalent in evokore's config, which authorizes by the MCP authorization spec only", raw)
		}
		return nil
	}
	var in map[string]any
	if err := json.Unmarshal(raw, &in); err != nil {
		return at(m.valStart, "its %s is not an object", m.name)
	}
	if on, ok := in["enabled"].(bool); ok && !on {
		cv.off = true
	}
	for k, v := range in {
		if err := cv.oauthSetting(m, k, v); err != nil {
			return err
		}
	}
	return nil
}

func (cv *jsonConversion) oauthSetting(m member, k string, v any) error {
	name, known := oauthNames[k]
	if !known {
		name = k // the schema decides whether evokore has it
	}
	if name == "" {
		return nil
	}
	if s, ok := v.(string); ok {
		t, err := cv.c.vars.translate(s)
		if err != nil {
			return at(m.valStart, "%s.%s: %v", m.name, k, err)
		}
		v = t
		if name == "scopes" {
			v = strings.Fields(t) // Claude Code writes them as one string
		}
	}
	if s, _ := v.(string); name == "clientSecret" && !reference(s) {
		return at(m.valStart, "%s.%s: the OAuth client secret is written out in the file, and evokore takes it only as ${VAR}: put it in an environment variable, write ${NAME}, then import again", m.name, k)
	}
	cv.oauth[name] = v
	return nil
}

// reference reports whether s is a single ${NAME}.
func reference(s string) bool {
	return strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") && varName.MatchString(s[2:len(s)-1])
}

// translated is the value at offset i of d as compact JSON, with every
// string's variable references rewritten by v; a string that needs no
// change keeps its bytes as written. path names the value in an error.
func (d *jsonDoc) translated(v syntax, i int, path string) ([]byte, error) {
	p := d.plain
	switch p[i] {
	case '"':
		end := skipString(p, i)
		var s string
		if err := json.Unmarshal(p[i:end], &s); err != nil {
			return nil, at(i, "%s: %v", path, err)
		}
		t, err := v.translate(s)
		if err != nil {
			return nil, at(i, "%s: %v", path, err)
		}
		if t == s {
			return p[i:end], nil
		}
		return compactJSON(t), nil
	case '{':
		return d.translatedObject(v, i, path)
	case '[':
		return d.translatedArray(v, i, path)
	}
	return compactValue(p[i:skipValue(p, i)]), nil
}

func (d *jsonDoc) translatedObject(v syntax, i int, path string) ([]byte, error) {
	o, err := d.objectAt(i)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for k, m := range o.members {
		val, err := d.translated(v, m.valStart, path+"."+m.name)
		if err != nil {
			return nil, err
		}
		if k > 0 {
			b.WriteByte(',')
		}
		b.Write(compactJSON(m.name))
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (d *jsonDoc) translatedArray(v syntax, i int, path string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for k, e := range d.elements(i) {
		val, err := d.translated(v, e, fmt.Sprintf("%s[%d]", path, k))
		if err != nil {
			return nil, err
		}
		if k > 0 {
			b.WriteByte(',')
		}
		b.Write(val)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// elements are the offsets of the elements of the array at i.
func (d *jsonDoc) elements(i int) []int {
	p := d.plain
	var out []int
	for i = skipSpace(p, i+1); i < len(p) && p[i] != ']'; {
		if p[i] == ',' {
			i = skipSpace(p, i+1)
			continue
		}
		out = append(out, i)
		i = skipSpace(p, skipValue(p, i))
	}
	return out
}

func compactValue(v []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return v
	}
	return b.Bytes()
}
