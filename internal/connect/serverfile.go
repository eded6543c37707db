package connect

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/pelletier/go-toml/v2"
)

// serverFile is a client's file seen as its list of servers, edited in
// place.
type serverFile interface {
	// names are the servers in file order.
	names() []string
	// command is a server's command and arguments, for the
	// self-reference check.
	command(name string) (string, []string)
	// raw is the server's text as written, which restore puts back.
	raw(name string) string
	// convert is the server as an evokore config entry (compact JSON).
	convert(name string) ([]byte, error)
	// same reports whether server name is exactly the entry e.
	same(name string, e stdioEntry) bool
	put(name string, e stdioEntry) error
	remove(name string) error
	// restore puts a server back as written, before server next when
	// the file has it, else last.
	restore(name, raw, next string) error
	// hasKey reports whether the file has its servers section at all;
	// dropKeyIfEmpty removes one connect added, once it is empty again.
	hasKey() bool
	dropKeyIfEmpty() error
	bytes() []byte
}

func openServerFile(c Client, data []byte) (serverFile, error) {
	if c.Format == TOML {
		d, err := parseTOMLDoc(data, c.Key)
		if err != nil {
			return nil, err
		}
		return tomlFile{d}, nil
	}
	d, err := parseJSONDoc(data)
	if err != nil {
		return nil, err
	}
	if err := d.unaccepted(c.Comments, c.TrailingCommas); err != nil {
		var pe *posError
		errors.As(err, &pe)
		return nil, at(pe.off, "%s, which %s does not accept in this file (it reads it as strict JSON): remove it, then run connect again", pe.msg, c.Title)
	}
	f := jsonFile{doc: d, key: c.Key, client: c}
	if _, _, err := d.objectPath(c.Key); err != nil {
		return nil, err
	}
	return f, nil
}

type jsonFile struct {
	doc    *jsonDoc
	key    string
	client Client
}

func (f jsonFile) servers() (object, bool) {
	o, ok, _ := f.doc.objectPath(f.key)
	return o, ok
}

func (f jsonFile) member(name string) (member, bool) {
	o, ok := f.servers()
	if !ok {
		return member{}, false
	}
	i, ok := o.find(name)
	if !ok {
		return member{}, false
	}
	return o.members[i], true
}

func (f jsonFile) names() []string {
	o, _ := f.servers()
	var out []string
	for _, m := range o.members {
		out = append(out, m.name)
	}
	return out
}

func (f jsonFile) command(name string) (string, []string) {
	m, _ := f.member(name)
	return commandOf(f.doc.plain[m.valStart:m.valEnd])
}

func (f jsonFile) raw(name string) string {
	m, _ := f.member(name)
	return string(f.doc.value(m))
}

func (f jsonFile) convert(name string) ([]byte, error) {
	m, _ := f.member(name)
	return convertJSON(f.client, f.doc, m.valStart)
}

func (f jsonFile) same(name string, e stdioEntry) bool {
	m, ok := f.member(name)
	return ok && sameJSON(f.doc.plain[m.valStart:m.valEnd], compactJSON(e))
}

// section returns the servers object, adding an empty one when absent.
func (f jsonFile) section() (object, error) {
	if o, ok := f.servers(); ok {
		return o, nil
	}
	root, err := f.doc.root()
	if err != nil {
		return object{}, err
	}
	f.doc.add(root, f.key, []byte("{}"), false)
	o, ok := f.servers()
	if !ok {
		return o, fmt.Errorf("could not add %q", f.key)
	}
	return o, nil
}

func (f jsonFile) put(name string, e stdioEntry) error {
	o, err := f.section()
	if err != nil {
		return err
	}
	if i, ok := o.find(name); ok {
		f.doc.set(o, i, compactJSON(e))
	} else {
		f.doc.add(o, name, compactJSON(e), false)
	}
	return f.check()
}

func (f jsonFile) remove(name string) error {
	o, _ := f.servers()
	if i, ok := o.find(name); ok {
		f.doc.remove(o, i)
	}
	return f.check()
}

func (f jsonFile) restore(name, raw, next string) error {
	o, err := f.section()
	if err != nil {
		return err
	}
	if !json.Valid(blankJSONC([]byte(raw))) {
		return fmt.Errorf("the recorded entry of '%s' is not JSON", name)
	}
	if i, ok := o.find(next); ok && next != "" {
		f.doc.insert(o, i, name, raw)
	} else {
		f.doc.add(o, name, []byte(raw), true)
	}
	return f.check()
}

func (f jsonFile) hasKey() bool {
	_, ok := f.servers()
	return ok
}

func (f jsonFile) dropKeyIfEmpty() error {
	o, ok := f.servers()
	if !ok || len(o.members) > 0 {
		return nil
	}
	root, _ := f.doc.root()
	if i, ok := root.find(f.key); ok {
		f.doc.remove(root, i)
	}
	return f.check()
}

// check refuses an edit that left the file other than valid JSON: a bug
// here must never cost the user their client's settings.
func (f jsonFile) check() error {
	if !json.Valid(f.doc.plain) {
		return fmt.Errorf("internal error: the edit would leave invalid JSON; nothing was written")
	}
	return nil
}

func (f jsonFile) bytes() []byte { return f.doc.data }

type tomlFile struct{ d *tomlDoc }

func (f tomlFile) names() []string { return f.d.names() }

func (f tomlFile) command(name string) (string, []string) {
	e := f.d.entry(name)
	cmd, _ := e["command"].(string)
	var args []string
	list, _ := e["args"].([]any)
	for _, a := range list {
		if s, ok := a.(string); ok {
			args = append(args, s)
		}
	}
	return cmd, args
}

func (f tomlFile) raw(name string) string { return f.d.raw(name) }

func (f tomlFile) convert(name string) ([]byte, error) {
	if f.d.inline[name] {
		return nil, at(f.d.keyAt(name), "it is written inline, not as a [%s.%s] table; move it by hand", f.d.key, name)
	}
	return convertTOML(f.d.entry(name), func(key ...string) int { return f.d.keyAt(name, key...) })
}

// same compares the entry as TOML decodes both, so a table written by
// hand in another layout is the same entry.
func (f tomlFile) same(name string, e stdioEntry) bool {
	got := f.d.entry(name)
	b, err := toml.Marshal(e)
	var want map[string]any
	if got == nil || err != nil || toml.Unmarshal(b, &want) != nil {
		return false
	}
	return reflect.DeepEqual(got, want)
}

func (f tomlFile) put(name string, e stdioEntry) error { return f.d.put(name, e) }
func (f tomlFile) remove(name string) error            { return f.d.remove(name) }
func (f tomlFile) restore(_, raw, next string) error   { return f.d.insertText(raw, next) }
func (f tomlFile) hasKey() bool                        { return true }
func (f tomlFile) dropKeyIfEmpty() error               { return nil }
func (f tomlFile) bytes() []byte                       { return f.d.data }
