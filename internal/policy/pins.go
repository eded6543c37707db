package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/canonjson"
	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/statefile"
)

// Tool pinning.
//
// The first time a server is seen, the definition of each of its tools
// (catalog.Definition: name, title, description, input and output schema,
// annotations) is recorded under EVOKORE_HOME, keyed by the server's
// identity (its id and a hash of how it is started), so two projects that
// both call a server "github" never judge each other's tools. From then on
// a tool is held (not listed, not found by discovery, calls refused) when
//   - the child serves a different definition under the same name, or
//   - the child serves a tool it did not serve when it was pinned (unless
//     the server says "pinNewTools": "accept"),
//
// until an operator reviews it (`evokore pins list` shows the old and new
// text) and runs `evokore pins accept SERVER[/TOOL]`. The model is told
// only which fields changed, never the new text: that text is what an
// attacker wrote. Servers with "pinning": false are not pinned.
//
// The store fails closed: when pins.json cannot be read every tool of a
// pinning server is held, and a tool whose pin cannot be written is held
// too, because a pin that is not on disk proves nothing after a restart.

const pinsFile = "pins.json"

// pinsVersion is the pins.json layout written since pins are keyed by
// server identity.
const pinsVersion = 2

// Pin is what is known about one tool's definition.
type Pin struct {
	// Accepted is the definition an operator trusts: the first one seen,
	// or the last one accepted. It is nil for a tool the server added
	// after it was pinned and that nobody accepted yet.
	Accepted *PinnedDefinition `json:"accepted,omitempty"`
	// Changed is the definition the child serves now when it is not the
	// accepted one.
	Changed *PinnedDefinition `json:"changed,omitempty"`
}

// PinnedDefinition is one version of a tool's definition, kept in full so
// an operator can see what changed.
type PinnedDefinition struct {
	catalog.Definition
	// Hash is catalog.DefinitionHash of the definition.
	Hash string `json:"hash,omitempty"`
	// LegacyHash and SchemaHash are all a pin written before pins covered
	// the whole definition holds: a hash of name, description and input
	// schema, and one of the input schema alone.
	LegacyHash string    `json:"legacyHash,omitempty"`
	SchemaHash string    `json:"schemaHash,omitempty"`
	SeenAt     time.Time `json:"seenAt"`
}

// serverPins are the pins of one server identity.
type serverPins struct {
	Server   string          `json:"server"`
	Identity string          `json:"identity"`
	Tools    map[string]*Pin `json:"tools"`
	// Skills are the pins of the server's skills by the child's SKILL.md
	// URI (skillpins.go); nil until its skills were first checked.
	Skills map[string]*SkillPin `json:"skills"`
}

// pinsDoc is pins.json.
type pinsDoc struct {
	Version int `json:"version"`
	// Pinned maps "<id>@<identity>" to the pins of that server.
	Pinned map[string]*serverPins `json:"pinned"`
	// Legacy are pins written before server identities (server id → tool
	// → pin). The first server with that id to be checked takes them
	// over: it is compared with them, so an upgrade never forgets a
	// quarantine or trusts a changed tool afresh.
	Legacy map[string]map[string]*Pin `json:"servers,omitempty"`
}

// Pins is the pin store of one EVOKORE_HOME.
type Pins struct {
	path string
	now  func() time.Time

	mu      sync.Mutex
	doc     pinsDoc
	exists  bool
	modTime time.Time
	// broken is why the store could not be read; while it is set every
	// tool is held and nothing is written over the damaged file.
	broken error
	// reported is the last problem Check returned per server key ("" for
	// an unreadable store), so a persisting problem is logged once, not on
	// every re-list.
	reported map[string]string
}

// OpenPins reads the pins under home. It always returns a usable store:
// when pins.json cannot be read the error says so and the store holds
// every tool until the file is repaired or removed.
func OpenPins(home string, now func() time.Time) (*Pins, error) {
	if now == nil {
		now = time.Now
	}
	p := &Pins{path: filepath.Join(home, pinsFile), now: now, reported: map[string]string{}}
	p.reload()
	if p.broken != nil {
		p.reported[""] = p.broken.Error() // the caller reports the error it gets
	}
	return p, p.broken
}

// reload reads the file again; a failure leaves the store broken.
func (p *Pins) reload() {
	var doc pinsDoc
	fi, statErr := os.Stat(p.path)
	ok, err := statefile.ReadJSON(p.path, &doc)
	p.exists, p.modTime = ok, time.Time{}
	if statErr == nil {
		p.modTime = fi.ModTime()
	}
	if err == nil && ok && doc.Version > pinsVersion {
		err = fmt.Errorf("written by a newer evokore (version %d)", doc.Version)
	}
	if err != nil {
		p.doc = emptyDoc()
		p.broken = fmt.Errorf("tool pins %s cannot be read (%v): every tool of a pinning server is held until it is repaired or removed (removing it pins every tool afresh)", p.path, err)
		return
	}
	p.broken = nil
	if doc.Pinned == nil {
		doc.Pinned = map[string]*serverPins{}
	}
	for key, sp := range doc.Pinned {
		if sp == nil || sp.Tools == nil {
			doc.Pinned[key] = &serverPins{Server: serverOfKey(key), Identity: identityOfKey(key), Tools: map[string]*Pin{}}
		}
	}
	for _, tools := range doc.Legacy {
		for _, pin := range tools {
			for _, d := range []*PinnedDefinition{pin.Accepted, pin.Changed} {
				// The first layout called its only hash "hash".
				if d != nil && d.LegacyHash == "" {
					d.LegacyHash, d.Hash = d.Hash, ""
				}
			}
		}
	}
	doc.Version = pinsVersion
	p.doc = doc
}

func emptyDoc() pinsDoc {
	return pinsDoc{Version: pinsVersion, Pinned: map[string]*serverPins{}}
}

// refreshLocked reloads the file when another process (`evokore pins
// accept`, another router) changed or removed it since it was read, so a
// write never undoes theirs. It reports whether anything was reloaded.
func (p *Pins) refreshLocked() bool {
	fi, err := os.Stat(p.path)
	switch {
	case err == nil && (!p.exists || !fi.ModTime().Equal(p.modTime)):
	case errors.Is(err, fs.ErrNotExist) && (p.exists || p.broken != nil):
	default:
		return false
	}
	p.reload()
	return true
}

func pinKey(server, identity string) string { return server + "@" + identity }

func serverOfKey(key string) string {
	i := strings.LastIndexByte(key, '@')
	if i < 0 {
		return key
	}
	return key[:i]
}

func identityOfKey(key string) string {
	i := strings.LastIndexByte(key, '@')
	if i < 0 {
		return ""
	}
	return key[i+1:]
}

// shortIdentity is how an operator names one of several servers that
// share an id: `evokore pins accept github@1a2b3c4d5e6f/create_issue`.
func shortIdentity(identity string) string { return identity[:min(12, len(identity))] }

// legacyHash is the hash the first pins layout recorded.
func legacyHash(t *mcp.Tool) string {
	schema, _ := canonjson.Marshal(t.InputSchema)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", t.Name, t.Description)
	h.Write(schema)
	return hex.EncodeToString(h.Sum(nil))
}

func schemaHash(t *mcp.Tool) string {
	schema, _ := canonjson.Marshal(t.InputSchema)
	sum := sha256.Sum256(schema)
	return hex.EncodeToString(sum[:])
}

func pinnedDefinition(t *mcp.Tool, now time.Time) *PinnedDefinition {
	d := catalog.DefinitionOf(t)
	return &PinnedDefinition{Definition: d, Hash: d.Hash(), SchemaHash: schemaHash(t), SeenAt: now.UTC()}
}

// canonicalize undoes the indentation pins.json is written with, so
// definitions read back compare field by field with fresh ones. Pins
// match by hash; only a held tool's definitions are compared field by
// field (changedFields), so only they are canonicalised, when they are:
// a returning user's store is read without re-writing every schema.
func (d *PinnedDefinition) canonicalize() {
	if d == nil {
		return
	}
	for _, f := range []*json.RawMessage{&d.InputSchema, &d.OutputSchema, &d.Annotations} {
		if len(*f) == 0 {
			continue
		}
		if c, err := canonjson.FromJSON(*f, ""); err == nil {
			*f = c
		}
	}
}

// matches reports whether t is the definition d records.
func (d *PinnedDefinition) matches(t *mcp.Tool, hash string) bool {
	switch {
	case d == nil:
		return false
	case d.Hash != "":
		return d.Hash == hash
	case d.LegacyHash != "":
		return d.LegacyHash == legacyHash(t)
	}
	return false
}

// Check pins a server's tools, the entries its tool list became (each
// carries the child's definition and its hash), and returns the model-visible message of
// every tool it holds, keyed by the child's tool name, and a problem with
// the store to log (empty when there is none, or it was returned before).
func (p *Pins) Check(server config.Server, entries []*catalog.Entry) (held map[string]string, problem string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refreshLocked()
	identity := server.Identity()
	key := pinKey(server.ID, identity)
	held = map[string]string{}
	if p.broken != nil {
		for _, e := range entries {
			held[e.Original] = msgPinsUnreadable(server.ID + "_" + e.Original)
		}
		return held, p.reportLocked("", p.broken.Error())
	}

	sp, fresh, migrated := p.doc.Pinned[key], false, false
	if sp == nil {
		sp = &serverPins{Server: server.ID, Identity: identity, Tools: map[string]*Pin{}}
		if legacy, ok := p.doc.Legacy[server.ID]; ok {
			sp.Tools, migrated = legacy, true
			delete(p.doc.Legacy, server.ID)
		} else {
			fresh = true
		}
		p.doc.Pinned[key] = sp
	}
	now := p.now()
	dirty := fresh || migrated
	var recorded []string
	for _, e := range entries {
		t, hash := e.Child, e.Hash
		pin := sp.Tools[t.Name]
		switch {
		case pin == nil && (fresh || !server.HoldsNewTools()):
			sp.Tools[t.Name] = &Pin{Accepted: pinnedDefinition(t, now)}
			recorded = append(recorded, t.Name)
			dirty = true
		case pin != nil && pin.Accepted.matches(t, hash):
			if pin.Accepted.Hash == "" {
				// A legacy pin that still matches: record the whole
				// definition, which the old pin did not cover.
				pin.Accepted = pinnedDefinition(t, now)
				dirty = true
			}
			if pin.Changed != nil {
				pin.Changed = nil // the child went back to the trusted one
				dirty = true
			}
		default:
			if pin == nil {
				pin = &Pin{}
				sp.Tools[t.Name] = pin
			}
			if pin.Changed == nil || pin.Changed.Hash != hash {
				pin.Changed = pinnedDefinition(t, now)
				dirty = true
			}
			held[t.Name] = p.heldTextLocked(server.ID, identity, t.Name, pin)
		}
	}
	if !dirty {
		return held, p.reportLocked(key, "")
	}
	if err := p.saveLocked(); err != nil {
		// A first-seen pin that is not on disk proves nothing after a
		// restart: hold those tools until the store can be written.
		for _, name := range recorded {
			delete(sp.Tools, name)
			held[name] = msgPinsUnwritable(server.ID + "_" + name)
		}
		if len(sp.Tools) == 0 {
			delete(p.doc.Pinned, key)
		}
		if len(recorded) == 0 {
			return held, p.reportLocked(key, "")
		}
		return held, p.reportLocked(key, fmt.Sprintf("tool pins %s cannot be written (%v): %d tool(s) of server '%s' are held until it can be", p.path, err, len(recorded), server.ID))
	}
	return held, p.reportLocked(key, "")
}

// reportLocked returns problem unless it was the last one returned for
// key.
func (p *Pins) reportLocked(key, problem string) string {
	if p.reported[key] == problem {
		return ""
	}
	p.reported[key] = problem
	return problem
}

// Holds is Check without recording anything: which of a server's tools a
// router would hold right now. `vet --matrix` and `profile` use it.
func (p *Pins) Holds(server config.Server, entries []*catalog.Entry) map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	held := map[string]string{}
	if p.broken != nil {
		for _, e := range entries {
			held[e.Original] = msgPinsUnreadable(server.ID + "_" + e.Original)
		}
		return held
	}
	sp := p.doc.Pinned[pinKey(server.ID, server.Identity())]
	var pins map[string]*Pin
	switch {
	case sp != nil:
		pins = sp.Tools
	case p.doc.Legacy[server.ID] != nil:
		pins = p.doc.Legacy[server.ID]
	default:
		return held // a new server: everything is pinned as first seen
	}
	for _, e := range entries {
		t := e.Child
		pin := pins[t.Name]
		if pin == nil && !server.HoldsNewTools() {
			continue
		}
		if pin != nil && pin.Accepted.matches(t, e.Hash) {
			continue
		}
		cur := &Pin{Changed: pinnedDefinition(t, time.Time{})}
		if pin != nil {
			cur.Accepted = pin.Accepted
		}
		held[t.Name] = p.heldTextLocked(server.ID, server.Identity(), t.Name, cur)
	}
	return held
}

// targetLocked is what an operator passes to `evokore pins accept` for
// one tool: SERVER/TOOL, with the identity when several configurations
// share the server id.
func (p *Pins) targetLocked(server, identity, tool string) string {
	n := 0
	for _, sp := range p.doc.Pinned {
		if sp.Server == server {
			n++
		}
	}
	if n > 1 && identity != "" {
		server += "@" + shortIdentity(identity)
	}
	return server + "/" + tool
}

func (p *Pins) heldTextLocked(server, identity, tool string, pin *Pin) string {
	target := p.targetLocked(server, identity, tool)
	if pin.Accepted == nil {
		return msgToolAdded(server+"_"+tool, server, target)
	}
	return msgToolChanged(server+"_"+tool, changedFields(pin.Accepted, pin.Changed), target)
}

// changedFields names the parts of a definition that differ, in the words
// the messages use. A legacy pin recorded only the description and a hash
// of the input schema, so only those can be named.
func changedFields(old, cur *PinnedDefinition) []string {
	if cur == nil {
		return nil
	}
	old.canonicalize()
	cur.canonicalize()
	var out []string
	if old.Hash == "" {
		if old.Description != cur.Description {
			out = append(out, "description")
		}
		if old.SchemaHash != cur.SchemaHash {
			out = append(out, "input schema")
		}
		if len(out) == 0 {
			out = append(out, "definition")
		}
		return out
	}
	for _, f := range definitionFields {
		if f.get(&old.Definition) != f.get(&cur.Definition) {
			out = append(out, f.name)
		}
	}
	if len(out) == 0 {
		out = append(out, "definition")
	}
	return out
}

// definitionFields are the parts of a definition a diff shows, in order.
var definitionFields = []struct {
	name string
	get  func(*catalog.Definition) string
}{
	{"name", func(d *catalog.Definition) string { return d.Name }},
	{"title", func(d *catalog.Definition) string { return d.Title }},
	{"description", func(d *catalog.Definition) string { return d.Description }},
	{"input schema", func(d *catalog.Definition) string { return string(d.InputSchema) }},
	{"output schema", func(d *catalog.Definition) string { return string(d.OutputSchema) }},
	{"annotations", func(d *catalog.Definition) string { return string(d.Annotations) }},
}

func (p *Pins) saveLocked() error {
	if p.broken != nil {
		return p.broken // never write over a file we could not read
	}
	if err := statefile.WriteJSON(p.path, p.doc, 0o600); err != nil {
		return err
	}
	if fi, err := os.Stat(p.path); err == nil {
		p.exists, p.modTime = true, fi.ModTime()
	}
	return nil
}

// HeldTool is one held tool as `evokore pins list` shows it.
type HeldTool struct {
	// Server is the server id; Identity tells servers with the same id
	// apart (empty for a pin from before identities).
	Server   string `json:"server"`
	Identity string `json:"identity,omitempty"`
	Tool     string `json:"tool"`
	// Target is what `evokore pins accept` takes for this tool.
	Target string `json:"target"`
	// Reason is "changed" or "added".
	Reason string `json:"reason"`
	// Fields are the parts of the definition that changed.
	Fields   []string          `json:"fields,omitempty"`
	Accepted *PinnedDefinition `json:"accepted,omitempty"`
	Current  *PinnedDefinition `json:"current"`
}

// Held lists every held tool, sorted by server and tool.
func (p *Pins) Held() []HeldTool {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []HeldTool
	add := func(server, identity string, tools map[string]*Pin) {
		for name, pin := range tools {
			if pin.Changed == nil {
				continue
			}
			h := HeldTool{Server: server, Identity: identity, Tool: name, Target: p.targetLocked(server, identity, name),
				Reason: "added", Accepted: pin.Accepted, Current: pin.Changed}
			if pin.Accepted != nil {
				h.Reason, h.Fields = "changed", changedFields(pin.Accepted, pin.Changed)
			}
			out = append(out, h)
		}
	}
	for _, sp := range p.doc.Pinned {
		add(sp.Server, sp.Identity, sp.Tools)
	}
	for server, tools := range p.doc.Legacy {
		add(server, "", tools)
	}
	slices.SortFunc(out, func(a, b HeldTool) int {
		return strings.Compare(a.Server+"\x00"+a.Identity+"\x00"+a.Tool, b.Server+"\x00"+b.Identity+"\x00"+b.Tool)
	})
	return out
}

// Accept trusts the definitions a server (or one of its tools) serves
// now. server is an id, or id@identity-prefix when several configurations
// share the id. It returns the tools it accepted.
func (p *Pins) Accept(server, tool string) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reload()
	if p.broken != nil {
		return nil, p.broken
	}
	id, prefix, qualified := strings.Cut(server, "@")
	var matches []*serverPins
	for _, key := range slices.Sorted(maps.Keys(p.doc.Pinned)) {
		sp := p.doc.Pinned[key]
		if sp.Server == id && strings.HasPrefix(sp.Identity, prefix) {
			matches = append(matches, sp)
		}
	}
	var pins map[string]*Pin
	switch {
	case len(matches) == 1:
		pins = matches[0].Tools
	case len(matches) > 1:
		var names []string
		for _, sp := range matches {
			names = append(names, id+"@"+shortIdentity(sp.Identity))
		}
		return nil, fmt.Errorf("%d configurations of server %q are pinned (%s): name one", len(matches), id, strings.Join(names, ", "))
	case !qualified && p.doc.Legacy[id] != nil:
		pins = p.doc.Legacy[id]
	default:
		return nil, fmt.Errorf("no pins for server %q", server)
	}
	var accepted []string
	if len(matches) == 1 {
		accepted = acceptSkills(matches[0], tool)
	}
	if tool != "" && pins[tool] == nil && len(accepted) == 0 {
		return nil, fmt.Errorf("no pin for %s/%s", server, tool)
	}
	for name, pin := range pins {
		if (tool == "" || name == tool) && pin.Changed != nil {
			pin.Accepted, pin.Changed = pin.Changed, nil
			accepted = append(accepted, name)
		}
	}
	slices.Sort(accepted)
	if len(accepted) > 0 {
		if err := p.saveLocked(); err != nil {
			return nil, fmt.Errorf("write %s: %w", p.path, err)
		}
	}
	return accepted, nil
}

// Watch polls the pins file and calls changed when another process (the
// `evokore pins accept` command) rewrote it, or removed or repaired a
// file that could not be read.
func (p *Pins) Watch(ctx context.Context, every time.Duration, changed func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p.mu.Lock()
		stale := p.refreshLocked()
		p.mu.Unlock()
		if stale {
			changed()
		}
	}
}

// The texts of held tools. A model reads them: they name the fields that
// changed and what an operator must do, and never repeat a word of the
// new definition, which is exactly what an attacker controls.

func msgToolChanged(name string, fields []string, target string) string {
	return fmt.Sprintf("Tool '%s' is quarantined: its %s changed since it was pinned. An operator must review the change (`evokore pins list`) and run `evokore pins accept %s` before it can be used.",
		name, joinFields(fields), target)
}

func msgToolAdded(name, server, target string) string {
	return fmt.Sprintf("Tool '%s' is quarantined: server '%s' added it after its tools were pinned. An operator must review it (`evokore pins list`) and run `evokore pins accept %s` before it can be used.",
		name, server, target)
}

func msgPinsUnreadable(name string) string {
	return fmt.Sprintf("Tool '%s' is quarantined: evokore cannot read its tool pins, so it cannot tell whether this definition was accepted. An operator must repair or remove pins.json under EVOKORE_HOME.", name)
}

func msgPinsUnwritable(name string) string {
	return fmt.Sprintf("Tool '%s' is quarantined: evokore cannot record its definition because pins.json under EVOKORE_HOME cannot be written. An operator must make it writable.", name)
}

// joinFields writes "a", "a and b", "a, b and c".
func joinFields(fields []string) string {
	if len(fields) <= 1 {
		return strings.Join(fields, "")
	}
	return strings.Join(fields[:len(fields)-1], ", ") + " and " + fields[len(fields)-1]
}
