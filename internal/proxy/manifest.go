package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/canonjson"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/statefile"
)

// manifest is a child's last tool list, kept under EVOKORE_HOME so the
// next start can list a known child's tools before it has booted.
type manifest struct {
	Server string `json:"server"`
	// Fingerprint ties the list to how the server is started; a changed
	// command, args or url invalidates it.
	Fingerprint string      `json:"fingerprint"`
	SavedAt     time.Time   `json:"savedAt"`
	Tools       []*mcp.Tool `json:"tools"`
}

func manifestPath(home, id string) string {
	return filepath.Join(home, "manifests", id+".json")
}

func fingerprint(s config.Server) string {
	raw, _ := canonjson.Marshal(map[string]any{
		"transport": s.Transport, "command": s.Command, "args": s.Args, "url": s.URL, "cwd": s.Cwd,
	})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// loadManifest returns the cached tools of s, or nil when there is no
// usable cache.
func loadManifest(home string, s config.Server) []*mcp.Tool {
	var m manifest
	ok, err := statefile.ReadJSON(manifestPath(home, s.ID), &m)
	if !ok || err != nil || m.Fingerprint != fingerprint(s) {
		return nil
	}
	return m.Tools
}

func saveManifest(home string, s config.Server, tools []*mcp.Tool) error {
	return statefile.WriteJSON(manifestPath(home, s.ID), manifest{
		Server: s.ID, Fingerprint: fingerprint(s), SavedAt: time.Now().UTC(), Tools: tools,
	}, 0o600)
}

// CachedTools returns the manifest cache of every enabled server that has
// one, in config order; `evokore profile` and `vet --matrix` use it
// without booting anything.
func CachedTools(home string, servers []config.Server) map[string][]*mcp.Tool {
	out := map[string][]*mcp.Tool{}
	for _, s := range servers {
		if s.Disabled {
			continue
		}
		if tools := loadManifest(home, s); tools != nil {
			out[s.ID] = tools
		}
	}
	return out
}
