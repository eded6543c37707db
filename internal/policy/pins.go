package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/canonjson"
	"github.com/evokore/evokore/internal/statefile"
)

// Tool pinning.
//
// The first time a child serves a tool, the hash of its definition (name,
// description, input schema) is recorded under EVOKORE_HOME. When a child
// later serves a different definition under the same name, at boot or
// after tools/list_changed, the tool is quarantined: not listed, not
// found by discovery, and calls are refused with a message that names what
// changed, until an operator runs `evokore pins accept SERVER[/TOOL]`.
// Servers with "pinning": false are not pinned.

const pinsFile = "pins.json"

// Pin is what is known about one tool's definition.
type Pin struct {
	// Accepted is the definition an operator trusts (the first one seen,
	// or the last one accepted).
	Accepted PinnedDefinition `json:"accepted"`
	// Changed is the different definition the child serves now, if any.
	Changed *PinnedDefinition `json:"changed,omitempty"`
}

// PinnedDefinition identifies one version of a tool's definition.
type PinnedDefinition struct {
	Hash        string    `json:"hash"`
	Description string    `json:"description"`
	SchemaHash  string    `json:"schemaHash"`
	SeenAt      time.Time `json:"seenAt"`
}

// pinsDoc is pins.json: server id → child tool name → pin.
type pinsDoc struct {
	Servers map[string]map[string]*Pin `json:"servers"`
}

// Pins is the pin store of one EVOKORE_HOME.
type Pins struct {
	path string
	now  func() time.Time

	mu      sync.Mutex
	doc     pinsDoc
	modTime time.Time
}

// OpenPins reads the pins under home.
func OpenPins(home string, now func() time.Time) (*Pins, error) {
	if now == nil {
		now = time.Now
	}
	p := &Pins{path: filepath.Join(home, pinsFile), now: now}
	if err := p.reload(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Pins) reload() error {
	var doc pinsDoc
	if _, err := statefile.ReadJSON(p.path, &doc); err != nil {
		return fmt.Errorf("read %s: %w", p.path, err)
	}
	if doc.Servers == nil {
		doc.Servers = map[string]map[string]*Pin{}
	}
	p.doc = doc
	if fi, err := os.Stat(p.path); err == nil {
		p.modTime = fi.ModTime()
	}
	return nil
}

func definition(t *mcp.Tool, now time.Time) PinnedDefinition {
	schema, _ := canonjson.Marshal(t.InputSchema)
	ss := sha256.Sum256(schema)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", t.Name, t.Description)
	h.Write(schema)
	return PinnedDefinition{Hash: hex.EncodeToString(h.Sum(nil)), Description: t.Description, SchemaHash: hex.EncodeToString(ss[:]), SeenAt: now.UTC()}
}

// Check records first-seen definitions of a server's tools and returns the
// quarantine message of every tool whose definition differs from the
// accepted one, keyed by the child's tool name.
func (p *Pins) Check(server string, tools []*mcp.Tool) map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	pins := p.doc.Servers[server]
	if pins == nil {
		pins = map[string]*Pin{}
		p.doc.Servers[server] = pins
	}
	dirty := false
	out := map[string]string{}
	for _, t := range tools {
		def := definition(t, now)
		pin, ok := pins[t.Name]
		switch {
		case !ok:
			pins[t.Name] = &Pin{Accepted: def}
			dirty = true
		case pin.Accepted.Hash == def.Hash:
			if pin.Changed != nil {
				pin.Changed = nil // the child went back to the trusted one
				dirty = true
			}
		default:
			if pin.Changed == nil || pin.Changed.Hash != def.Hash {
				pin.Changed = &def
				dirty = true
			}
			out[t.Name] = quarantineText(server, t.Name, pin)
		}
	}
	if dirty {
		p.saveLocked()
	}
	return out
}

func quarantineText(server, tool string, pin *Pin) string {
	var what []string
	if pin.Changed.Description != pin.Accepted.Description {
		what = append(what, fmt.Sprintf("its description changed from %q to %q", pin.Accepted.Description, pin.Changed.Description))
	}
	if pin.Changed.SchemaHash != pin.Accepted.SchemaHash {
		what = append(what, "its input schema changed")
	}
	if len(what) == 0 {
		what = append(what, "its definition changed")
	}
	return fmt.Sprintf("Tool '%s_%s' is quarantined: %s since it was pinned. An operator must review it and run `evokore pins accept %s/%s` before it can be used.",
		server, tool, strings.Join(what, " and "), server, tool)
}

func (p *Pins) saveLocked() {
	// Best effort: losing a pin write means the tool is pinned again next
	// time, never that a changed tool runs.
	_ = statefile.WriteJSON(p.path, p.doc, 0o600)
	if fi, err := os.Stat(p.path); err == nil {
		p.modTime = fi.ModTime()
	}
}

// Accept trusts the definitions a server (or one of its tools) serves now.
// It returns the tools it accepted.
func (p *Pins) Accept(server, tool string) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.reload(); err != nil {
		return nil, err
	}
	pins, ok := p.doc.Servers[server]
	if !ok {
		return nil, fmt.Errorf("no pins for server %q", server)
	}
	if tool != "" && pins[tool] == nil {
		return nil, fmt.Errorf("no pin for %s/%s", server, tool)
	}
	var accepted []string
	for name, pin := range pins {
		if (tool == "" || name == tool) && pin.Changed != nil {
			pin.Accepted, pin.Changed = *pin.Changed, nil
			accepted = append(accepted, name)
		}
	}
	slices.Sort(accepted)
	if len(accepted) > 0 {
		p.saveLocked()
	}
	return accepted, nil
}

// Quarantined lists "server/tool" for every tool held back.
func (p *Pins) Quarantined() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for server, pins := range p.doc.Servers {
		for name, pin := range pins {
			if pin.Changed != nil {
				out = append(out, server+"/"+name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Watch polls the pins file and calls changed when another process (the
// `evokore pins accept` command) rewrote it.
func (p *Pins) Watch(ctx context.Context, every time.Duration, changed func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fi, err := os.Stat(p.path)
		if err != nil {
			continue
		}
		p.mu.Lock()
		stale := !fi.ModTime().Equal(p.modTime)
		if stale {
			_ = p.reload()
		}
		p.mu.Unlock()
		if stale {
			changed()
		}
	}
}
