package connect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	"github.com/evokore/evokore/internal/redact"
)

// planner is one Connect while it plans: the client's file as it is
// being edited, evokore's config, and the record of the connection.
type planner struct {
	o   Options
	p   *Plan
	f   serverFile
	rec *record
	// cfg is evokore's config being edited, when importing; cfgData the
	// config as it is otherwise (nil when absent or unreadable).
	cfg      *jsonFile
	cfgData  []byte
	keyAdded bool
}

// emptyConfig is the config connect creates when the user has none.
var emptyConfig = []byte("{\n  \"servers\": {}\n}\n")

// Connect plans the evokore entry into the client's file, and with
// Import the move of the client's other servers into evokore's config.
// The steps run in this order because each needs the one before: the
// entry passes the variables of the config as the import leaves it.
func Connect(o Options) (*Plan, error) {
	pl, err := openClient(o)
	if err != nil {
		return nil, err
	}
	if err := pl.openConfig(); err != nil {
		return nil, err
	}
	if err := pl.importServers(); err != nil {
		return nil, err
	}
	if err := pl.placeEntry(); err != nil {
		return nil, err
	}
	pl.finish()
	return pl.p, nil
}

// openClient reads the client's file and the record of an earlier
// connect.
func openClient(o Options) (*planner, error) {
	before, existed, err := readFile(o.File)
	if err != nil {
		return nil, err
	}
	f, err := openServerFile(o.Client, before)
	if err != nil {
		return nil, fmt.Errorf("%s; it is left as it is", located(o.File, before, err))
	}
	rec, err := loadRecord(o.Home, o.File)
	if err != nil {
		return nil, fmt.Errorf("the record of an earlier connect is unreadable: %w", err)
	}
	if rec == nil {
		rec = &record{Client: o.Client.Name, File: o.File, Config: o.Target.Config, Before: hash(before)}
	}
	if len(rec.Order) == 0 {
		rec.Order = f.names()
	}
	p := &Plan{Client: File{Path: o.File, Before: before, Existed: existed}, home: o.Home}
	return &planner{o: o, p: p, f: f, rec: rec, keyAdded: !f.hasKey()}, nil
}

// openConfig opens evokore's config for the import, or, without one,
// reads it for the variables the entry passes and plans an empty one
// when there is none: the entry serves it, so it must exist.
func (pl *planner) openConfig() error {
	path := pl.o.Target.Config
	if !pl.o.Import {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			pl.p.Config = File{Path: path, After: emptyConfig}
		}
		if pl.o.Client.passEnv != nil {
			pl.cfgData, _, _ = readFile(path)
		}
		return nil
	}
	cb, existed, err := readFile(path)
	if err != nil {
		return err
	}
	if !existed || len(bytes.TrimSpace(cb)) == 0 {
		cb = nil
	}
	pl.p.Config = File{Path: path, Before: cb, Existed: existed}
	src := cb
	if src == nil {
		src = emptyConfig
	}
	cfg, err := openConfig(src)
	if err != nil {
		return fmt.Errorf("%s; nothing was imported", located(path, src, err))
	}
	pl.cfg = &cfg
	return nil
}

// openConfig opens evokore's own config: its servers are under
// "servers", or "mcpServers" in a file written for a client.
func openConfig(data []byte) (jsonFile, error) {
	d, err := parseJSONDoc(data)
	if err != nil {
		return jsonFile{}, err
	}
	key := "servers"
	if _, ok, _ := d.objectPath("servers"); !ok {
		if _, ok, _ := d.objectPath("mcpServers"); ok {
			key = "mcpServers"
		}
	}
	if _, _, err := d.objectPath(key); err != nil {
		return jsonFile{}, err
	}
	return jsonFile{doc: d, key: key}, nil
}

// importServers decides for every server of the client, in the file as
// it was read (so a refusal's place is the file's), then moves those
// evokore's config took.
func (pl *planner) importServers() error {
	var moving []string
	for _, n := range pl.f.names() {
		if n == Name {
			continue
		}
		if !pl.o.Import {
			pl.p.Kept = append(pl.p.Kept, n)
			continue
		}
		entry, why := pl.convert(n)
		if why != "" {
			pl.p.Refused = append(pl.p.Refused, Refusal{n, why})
			continue
		}
		moved, err := pl.addToConfig(n, entry)
		if err != nil {
			return err
		}
		if moved {
			moving = append(moving, n)
		}
	}
	for _, n := range moving {
		raw := pl.f.raw(n)
		if err := pl.f.remove(n); err != nil {
			return fmt.Errorf("%s: %w", pl.o.File, err)
		}
		pl.rec.Imported = append(pl.rec.Imported, imported{Name: n, Raw: raw})
	}
	return nil
}

// convert is server n as an entry of evokore's config, or why it stays
// in the client.
func (pl *planner) convert(n string) ([]byte, string) {
	cmd, args := pl.f.command(n)
	if why, self := StartsEvokore(cmd, args, filepath.Dir(pl.o.File)); self {
		return nil, why + ": evokore does not import itself (it would start itself without end)"
	}
	if !validID.MatchString(n) {
		return nil, "its name makes tool names clients reject; rename it (letters, digits, '_' and '-') and import again"
	}
	entry, err := pl.f.convert(n)
	if err != nil {
		return nil, located(pl.o.File, pl.p.Client.Before, err)
	}
	return pl.settleOAuth(entry)
}

// addToConfig adds server n to evokore's config; moved is false when
// the config has a different server of that name. One with the same
// definition counts as imported.
func (pl *planner) addToConfig(n string, entry []byte) (moved bool, err error) {
	cf := *pl.cfg
	if existing, ok := cf.member(n); ok {
		if sameJSON(cf.doc.plain[existing.valStart:existing.valEnd], entry) {
			pl.p.Already = append(pl.p.Already, n)
			return true, nil
		}
		pl.p.Refused = append(pl.p.Refused, Refusal{n, fmt.Sprintf("%s already has a different server '%s'", pl.o.Target.Config, n)})
		return false, nil
	}
	sec, err := cf.section()
	if err != nil {
		return false, err
	}
	cf.doc.add(sec, n, entry, false)
	if err := cf.check(); err != nil {
		return false, err
	}
	pl.p.Imported = append(pl.p.Imported, n)
	return true, nil
}

// remoteEntry is what settleOAuth reads of a converted entry.
type remoteEntry struct {
	Type      string            `json:"type"`
	Transport string            `json:"transport"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
	OAuth     json.RawMessage   `json:"oauth"`
}

// settleOAuth decides what becomes of a remote server's authorization.
// A server that sends no credentials of its own most likely signs in
// with OAuth, which the client does for it today: it moves only when
// evokore's config can say so ("oauth": {}, checked against the schema),
// and so does one carrying the client's OAuth client settings. Else it
// stays in the client, where it works, and the reason says so.
func (pl *planner) settleOAuth(entry []byte) ([]byte, string) {
	var e remoteEntry
	_ = json.Unmarshal(entry, &e)
	switch {
	case e.OAuth != nil:
		if err := pl.schemaTakes(entry); err != nil {
			return nil, fmt.Sprintf("it carries OAuth client settings, and %v: it stays in %s, which signs it in", err, pl.o.Client.Title)
		}
		return entry, ""
	case !e.remote() || e.credentials():
		return entry, ""
	}
	with := withMember(entry, "oauth", []byte("{}"))
	if err := pl.schemaTakes(with); err != nil {
		return nil, fmt.Sprintf("it is a remote server that sends no credentials of its own, so it most likely signs in with OAuth, and %v: it stays in %s, which signs it in (if it needs no sign-in, add it to evokore's config by hand)", err, pl.o.Client.Title)
	}
	return with, ""
}

// schemaTakes reports why evokore's config does not take entry.
func (pl *planner) schemaTakes(entry []byte) error {
	if pl.o.Schema == nil {
		return errors.New("evokore's config has no OAuth settings to hold them")
	}
	if err := pl.o.Schema(entry); err != nil {
		return fmt.Errorf("evokore's config does not take them (%v)", err)
	}
	return nil
}

func (e remoteEntry) remote() bool {
	t := e.Type
	if t == "" {
		t = e.Transport
	}
	return e.URL != "" && t != "" && t != "stdio"
}

// credentials reports whether the server sends something that
// authenticates it: a header, or a user or a secret-named parameter in
// its URL.
func (e remoteEntry) credentials() bool {
	if len(e.Headers) > 0 {
		return true
	}
	u, err := url.Parse(e.URL)
	if err != nil || u.User != nil {
		return true
	}
	for k := range u.Query() {
		if redact.SecretKey(k) {
			return true
		}
	}
	return false
}

// withMember is compact JSON object entry with member k set to v.
func withMember(entry []byte, k string, v []byte) []byte {
	d := &jsonDoc{data: entry, plain: entry}
	o, err := d.root()
	if err != nil {
		return entry
	}
	d.add(o, k, v, false)
	return d.data
}

// placeEntry puts evokore's entry into the client's file, keeping an
// entry named evokore it replaces for disconnect.
func (pl *planner) placeEntry() error {
	pl.p.Passed = pl.passed()
	want := pl.o.Client.entry(pl.o.Target, pl.p.Passed)
	has := slices.Contains(pl.f.names(), Name)
	switch {
	case has && pl.f.same(Name, want):
		pl.p.Connected = true
		return nil
	case has && pl.rec.Changes == 0:
		prev := pl.f.raw(Name)
		pl.rec.Previous = &prev
	}
	if err := pl.f.put(Name, want); err != nil {
		return fmt.Errorf("%s: %w", pl.o.File, err)
	}
	return nil
}

// passed are the variables the entry passes to evokore, for a client
// that starts it with only part of its environment: every ${NAME} the
// enabled servers of the config refer to, once the import is done.
func (pl *planner) passed() []string {
	if pl.o.Client.passEnv == nil || pl.o.Target.Portable {
		return nil
	}
	data := pl.cfgData
	if pl.cfg != nil {
		data = pl.cfg.bytes()
	}
	return configVars(data)
}

// configVars are the variables the enabled servers of an evokore config
// refer to, sorted.
func configVars(data []byte) []string {
	var doc struct {
		Servers    map[string]map[string]any `json:"servers"`
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if json.Unmarshal(blankJSONC(data), &doc) != nil {
		return nil
	}
	names := map[string]bool{}
	for _, section := range []map[string]map[string]any{doc.Servers, doc.MCPServers} {
		for _, s := range section {
			if off, _ := s["disabled"].(bool); off {
				continue
			}
			walkStrings(s, func(v string) { placeholderNames(v, names) })
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// walkStrings calls fn with every string in a decoded JSON value.
func walkStrings(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			walkStrings(e, fn)
		}
	case map[string]any:
		for _, e := range x {
			walkStrings(e, fn)
		}
	}
}

// finish sets what the files become and the record of the change.
func (pl *planner) finish() {
	p := pl.p
	p.Client.After = pl.f.bytes()
	if pl.cfg != nil {
		p.Config.After = pl.cfg.bytes()
		if p.Config.Before == nil && len(p.Imported) == 0 {
			// Nothing to import: do not create a config just to hold nothing.
			p.Config.After = nil
		}
	}
	if p.Client.Changed() {
		if pl.rec.Changes == 0 {
			pl.rec.KeyAdded = pl.keyAdded
		}
		pl.rec.Changes++
		pl.rec.After = hash(p.Client.After)
		p.record = pl.rec
	}
}
