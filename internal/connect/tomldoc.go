package connect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex keeps its servers as [mcp_servers.NAME] tables of
// ~/.codex/config.toml. Like the JSON files, the file is edited as text:
// a server's tables are cut out or appended whole, so comments, the
// order and the other tables stay as written. The TOML library parses
// the file to find the tables and decodes it to read the entries; every
// edit is decoded again before it is kept.

// region is one table of the file: its dotted header key and the bytes
// from the start of its header line to the start of the next header.
type region struct {
	key        []string
	start, end int
	// last is where the table's last expression ends.
	last int
}

type tomlDoc struct {
	data    []byte
	key     string
	regions []region
	// inline names servers written other than as [key.NAME] tables
	// (an inline table under [key], or dotted keys), which connect
	// leaves alone.
	inline  map[string]bool
	decoded map[string]any
	// keys are where each key (its dotted path joined by NUL, a table's
	// header included) is first written, for positioned refusals.
	keys map[string]int
}

func parseTOMLDoc(data []byte, key string) (*tomlDoc, error) {
	d := &tomlDoc{data: data, key: key}
	return d, d.reparse()
}

func (d *tomlDoc) reparse() error {
	d.regions, d.inline, d.decoded, d.keys = nil, map[string]bool{}, nil, map[string]int{}
	if err := toml.Unmarshal(d.data, &d.decoded); err != nil {
		return fmt.Errorf("not valid TOML: %w", err)
	}
	var p unstable.Parser
	p.Reset(d.data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var key []string
			off := -1
			it := e.Key()
			for it.Next() {
				n := it.Node()
				if off < 0 {
					off = int(n.Raw.Offset)
				}
				key = append(key, string(n.Data))
			}
			start := bytes.LastIndexByte(d.data[:off], '\n') + 1
			if len(d.regions) > 0 {
				d.regions[len(d.regions)-1].end = start
			}
			d.regions = append(d.regions, region{key: key, start: start, end: len(d.data), last: off})
			d.note(key, off)
			table = key
		case unstable.KeyValue:
			var key []string
			off := -1
			it := e.Key()
			for it.Next() {
				if off < 0 {
					off = int(it.Node().Raw.Offset)
				}
				key = append(key, string(it.Node().Data))
			}
			if n := len(d.regions); n > 0 {
				d.regions[n-1].last = int(e.Raw.Offset + e.Raw.Length)
			}
			full := append(append([]string(nil), table...), key...)
			d.note(full, off)
			if len(full) >= 2 && full[0] == d.key && (len(table) < 2) {
				d.inline[full[1]] = true
			}
		}
	}
	if err := p.Error(); err != nil {
		return fmt.Errorf("not valid TOML: %w", err)
	}
	// A table ends with its last line and the blank lines after it; a
	// comment after them belongs to what follows, so cutting a table
	// never takes a comment the user wrote below it.
	for i := range d.regions {
		r := &d.regions[i]
		end := r.last
		if nl := bytes.IndexByte(d.data[end:r.end], '\n'); nl >= 0 {
			end += nl + 1
		} else {
			end = r.end
		}
		for end < r.end {
			nl := bytes.IndexByte(d.data[end:r.end], '\n')
			if nl < 0 || len(bytes.TrimSpace(d.data[end:end+nl])) > 0 {
				break
			}
			end += nl + 1
		}
		r.end = end
	}
	return nil
}

// note records where key is first written.
func (d *tomlDoc) note(key []string, off int) {
	k := strings.Join(key, "\x00")
	if _, seen := d.keys[k]; !seen {
		d.keys[k] = off
	}
}

// keyAt is where key of server name is written, or of the server
// itself when it has no such key; -1 when neither is known.
func (d *tomlDoc) keyAt(name string, key ...string) int {
	for n := len(key); n >= 0; n-- {
		if off, ok := d.keys[strings.Join(append([]string{d.key, name}, key[:n]...), "\x00")]; ok {
			return off
		}
	}
	return -1
}

// names are the servers in the order their tables appear, then those
// written inline.
func (d *tomlDoc) names() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range d.regions {
		if len(r.key) >= 2 && r.key[0] == d.key && !seen[r.key[1]] {
			seen[r.key[1]] = true
			out = append(out, r.key[1])
		}
	}
	servers, _ := d.decoded[d.key].(map[string]any)
	for name := range servers {
		if !seen[name] {
			out = append(out, name)
		}
	}
	return out
}

// tables are the regions of server name.
func (d *tomlDoc) tables(name string) []region {
	var out []region
	for _, r := range d.regions {
		if len(r.key) >= 2 && r.key[0] == d.key && r.key[1] == name {
			out = append(out, r)
		}
	}
	return out
}

// raw is the text of server name's tables.
func (d *tomlDoc) raw(name string) string {
	var b strings.Builder
	for _, r := range d.tables(name) {
		b.Write(d.data[r.start:r.end])
	}
	return b.String()
}

func (d *tomlDoc) entry(name string) map[string]any {
	servers, _ := d.decoded[d.key].(map[string]any)
	e, _ := servers[name].(map[string]any)
	return e
}

// remove cuts server name's tables out of the file.
func (d *tomlDoc) remove(name string) error {
	if d.inline[name] {
		return fmt.Errorf("it is written inline, not as a [%s.%s] table; move it by hand", d.key, name)
	}
	rs := d.tables(name)
	for i := len(rs) - 1; i >= 0; i-- {
		start := rs[i].start
		// The last table takes the blank line appendText put before it.
		if rs[i].end == len(d.data) && bytes.HasSuffix(d.data[:start], []byte("\n\n")) {
			start--
		}
		d.data = append(d.data[:start:start], d.data[rs[i].end:]...)
	}
	return d.reparse()
}

// appendText adds tables at the end of the file, after a blank line.
func (d *tomlDoc) appendText(text string) error {
	old := d.data
	var b bytes.Buffer
	b.Write(old)
	if len(bytes.TrimSpace(old)) > 0 {
		if !bytes.HasSuffix(old, []byte("\n")) {
			b.WriteByte('\n')
		}
		if !bytes.HasSuffix(old, []byte("\n\n")) {
			b.WriteByte('\n')
		}
	}
	b.WriteString(text)
	d.data = b.Bytes()
	if err := d.reparse(); err != nil {
		d.data = old
		_ = d.reparse()
		return err
	}
	return nil
}

// insertText puts tables before server next's first table, or at the
// end when the file has no such server.
func (d *tomlDoc) insertText(text, next string) error {
	rs := d.tables(next)
	if next == "" || len(rs) == 0 {
		return d.appendText(text)
	}
	if !strings.HasSuffix(text, "\n\n") {
		text = strings.TrimRight(text, "\n") + "\n\n"
	}
	old := d.data
	at := rs[0].start
	d.data = append(append(append([]byte(nil), old[:at]...), text...), old[at:]...)
	if err := d.reparse(); err != nil {
		d.data = old
		_ = d.reparse()
		return err
	}
	return nil
}

// put writes server name from e, replacing its tables when it has some.
func (d *tomlDoc) put(name string, e stdioEntry) error {
	body, err := toml.Marshal(e)
	if err != nil {
		return err
	}
	text := "[" + d.key + "." + tomlKey(name) + "]\n" + string(body)
	if rs := d.tables(name); len(rs) > 0 {
		old := d.data
		start, end := rs[0].start, rs[len(rs)-1].end
		tail := ""
		if end < len(d.data) {
			tail = "\n" // keep the blank line before the next table
		}
		d.data = append(append(append([]byte(nil), old[:start]...), text+tail...), old[end:]...)
		if err := d.reparse(); err != nil {
			d.data = old
			_ = d.reparse()
			return err
		}
		return nil
	}
	if d.inline[name] {
		return fmt.Errorf("[%s] already has an inline '%s' entry; remove it by hand", d.key, name)
	}
	return d.appendText(text)
}

// tomlKey writes a key bare when TOML allows it, else quoted.
func tomlKey(k string) string {
	if validID.MatchString(k) {
		return k
	}
	b, _ := json.Marshal(k)
	return string(b)
}
