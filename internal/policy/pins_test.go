package policy_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/canonjson"
	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/testutil"
)

// firstLayoutPin is a pin as the first pins.json layout wrote it: keyed
// by server id alone, hashing name, description and input schema.
func firstLayoutPin(t *mcp.Tool) map[string]any {
	schema, _ := canonjson.Marshal(t.InputSchema)
	h := sha256.New()
	h.Write([]byte(t.Name + "\x00" + t.Description + "\x00"))
	h.Write(schema)
	s := sha256.Sum256(schema)
	return map[string]any{"accepted": map[string]any{
		"hash": hex.EncodeToString(h.Sum(nil)), "description": t.Description,
		"schemaHash": hex.EncodeToString(s[:]), "seenAt": "2026-01-01T00:00:00Z",
	}}
}

func tool(name, desc string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}}}
}

func TestPinsOfTheFirstLayoutCarryOver(t *testing.T) {
	home := t.TempDir()
	echo, slow := tool("echo", "Echoes."), tool("slow", "Sleeps.")
	testutil.WriteJSON(t, home, "pins.json", map[string]any{"servers": map[string]any{"fx": map[string]any{
		"echo": firstLayoutPin(echo),
		"slow": firstLayoutPin(tool("slow", "Sleeps, as first pinned.")),
	}}})
	fx := config.Server{ID: "fx", Command: "fixture"}

	pins, err := policy.OpenPins(home, nil)
	if err != nil {
		t.Fatal(err)
	}
	held, problem := pins.Check(fx, catalog.ProxyEntries("fx", []*mcp.Tool{echo, slow, tool("added", "New.")}))
	if problem != "" || len(held) != 2 || held["echo"] != "" ||
		!strings.Contains(held["slow"], "its description changed") || !strings.Contains(held["added"], "added it after") {
		t.Fatalf("held %v, problem %q", held, problem)
	}
	// The file is in the new layout, keyed by identity; the old key is gone.
	var doc struct {
		Version int                        `json:"version"`
		Pinned  map[string]json.RawMessage `json:"pinned"`
		Servers map[string]any             `json:"servers"`
	}
	raw, _ := os.ReadFile(filepath.Join(home, "pins.json"))
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Version != 2 || len(doc.Pinned) != 1 || doc.Servers != nil {
		t.Fatalf("pins.json after migration: %s", raw)
	}
	for key := range doc.Pinned {
		if key != "fx@"+fx.Identity() {
			t.Errorf("key %q", key)
		}
	}
	// The carried-over pin now covers the whole definition.
	changed := tool("echo", "Echoes.")
	changed.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	if held, _ := pins.Check(fx, catalog.ProxyEntries("fx", []*mcp.Tool{changed})); !strings.Contains(held["echo"], "its annotations changed") {
		t.Errorf("an annotation change after migration: %v", held)
	}
	// The operator sees the old description the first layout recorded.
	var slowHeld *policy.HeldTool
	for _, h := range pins.Held() {
		if h.Tool == "slow" {
			slowHeld = &h
		}
	}
	if slowHeld == nil || slowHeld.Accepted.Description != "Sleeps, as first pinned." || slowHeld.Current.Description != "Sleeps." {
		t.Errorf("held slow: %+v", slowHeld)
	}
	// Another configuration named fx starts afresh.
	other := config.Server{ID: "fx", Command: "another-program"}
	if held, _ := pins.Check(other, catalog.ProxyEntries("fx", []*mcp.Tool{tool("slow", "Something else entirely.")})); len(held) != 0 {
		t.Errorf("another fx judged by the first one's pins: %v", held)
	}
	// With two fx pinned, accept needs to know which one.
	if _, err := pins.Accept("fx", "slow"); err == nil || !strings.Contains(err.Error(), "fx@"+fx.Identity()[:12]) {
		t.Errorf("ambiguous accept: %v", err)
	}
	if got, err := pins.Accept("fx@"+fx.Identity()[:12], "slow"); err != nil || len(got) != 1 {
		t.Errorf("accept fx@identity/slow: %v %v", got, err)
	}
}

func TestHoldsRecordsNothing(t *testing.T) {
	home := t.TempDir()
	pins, _ := policy.OpenPins(home, nil)
	fx := config.Server{ID: "fx", Command: "fixture"}
	if held := pins.Holds(fx, catalog.ProxyEntries("fx", []*mcp.Tool{tool("echo", "Echoes.")})); len(held) != 0 {
		t.Errorf("a new server's tools held: %v", held)
	}
	if _, err := os.Stat(filepath.Join(home, "pins.json")); !os.IsNotExist(err) {
		t.Errorf("Holds wrote the store: %v", err)
	}
	pins.Check(fx, catalog.ProxyEntries("fx", []*mcp.Tool{tool("echo", "Echoes.")}))
	held := pins.Holds(fx, catalog.ProxyEntries("fx", []*mcp.Tool{tool("echo", "Changed."), tool("added", "New.")}))
	if len(held) != 2 {
		t.Errorf("held %v", held)
	}
	if len(pins.Held()) != 0 {
		t.Errorf("Holds recorded a change: %+v", pins.Held())
	}
}

func TestShippedPermissionsAreFreshEveryCall(t *testing.T) {
	a := policy.ShippedPermissions()
	for i := range a.Roles {
		a.Roles[i].DefaultPermission = "allow"
		a.Roles[i].Overrides["fleet_spawn"] = "allow"
	}
	a.Rules["fleet_spawn"] = "allow"
	a.Roles = append(a.Roles[:0], config.Role{Name: "intruder"})
	b := policy.ShippedPermissions()
	if len(b.Roles) < 2 || b.Roles[0].Name == "intruder" {
		t.Fatalf("roles changed through another caller's copy: %+v", b.Roles)
	}
	for _, r := range b.Roles {
		if r.Name == "readonly" && (r.DefaultPermission == "allow" || r.Overrides["fleet_spawn"] == "allow") {
			t.Errorf("readonly changed through another caller's copy: %+v", r)
		}
	}
	if b.Rules["fleet_spawn"] == "allow" {
		t.Error("rules changed through another caller's copy")
	}
	if rbac := policy.NewRBAC(new(policy.ShippedPermissions()), false); rbac.Level("readonly", "fleet_spawn") != policy.Deny {
		t.Errorf("readonly may fleet_spawn: %v", rbac.Level("readonly", "fleet_spawn"))
	}
}

// A store read back at the next start (written indented) names only the
// part of a definition that changed: its pinned schema is compared in
// canonical form, however the file spells it.
func TestAStoreReadBackNamesOnlyWhatChanged(t *testing.T) {
	home := t.TempDir()
	fx := config.Server{ID: "fx", Command: "fixture"}
	first, err := policy.OpenPins(home, nil)
	if err != nil {
		t.Fatal(err)
	}
	if held, problem := first.Check(fx, catalog.ProxyEntries("fx", []*mcp.Tool{tool("echo", "Echoes.")})); len(held) != 0 || problem != "" {
		t.Fatalf("first sight: held %v, problem %q", held, problem)
	}
	pins, err := policy.OpenPins(home, nil)
	if err != nil {
		t.Fatal(err)
	}
	held, _ := pins.Check(fx, catalog.ProxyEntries("fx", []*mcp.Tool{tool("echo", "Echoes, differently.")}))
	if !strings.Contains(held["echo"], "its description changed since") {
		t.Errorf("held %q, want only the description named", held["echo"])
	}
	if h := pins.Held(); len(h) != 1 || !slices.Equal(h[0].Fields, []string{"description"}) {
		t.Errorf("pins list: %+v", h)
	}
}
