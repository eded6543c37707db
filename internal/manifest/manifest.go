// Package manifest is the tool-list cache under EVOKORE_HOME: each child's
// last tools/list, tied to the server's identity, so the next start lists a
// known child's tools before it has booted, and `evokore profile` and
// `vet --matrix` see proxied tools without booting anything.
//
// It reads and writes files only; it must not start processes.
package manifest

import (
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/statefile"
)

// manifest is one child's cached tool list.
type manifest struct {
	Server string `json:"server"`
	// Fingerprint is the server's identity; a changed command, args or
	// url invalidates the list.
	Fingerprint string      `json:"fingerprint"`
	SavedAt     time.Time   `json:"savedAt"`
	Tools       []*mcp.Tool `json:"tools"`
}

func path(home, id string) string {
	return filepath.Join(home, "manifests", id+".json")
}

// Load returns the cached tools of s, or nil when there is no usable
// cache.
func Load(home string, s config.Server) []*mcp.Tool {
	var m manifest
	ok, err := statefile.ReadJSON(path(home, s.ID), &m)
	if !ok || err != nil || m.Fingerprint != s.Identity() {
		return nil
	}
	return m.Tools
}

// Save caches tools as s's last tool list.
func Save(home string, s config.Server, tools []*mcp.Tool) error {
	return statefile.WriteJSON(path(home, s.ID), manifest{
		Server: s.ID, Fingerprint: s.Identity(), SavedAt: time.Now().UTC(), Tools: tools,
	}, 0o600)
}

// Cached returns the cache of every enabled server that has one, keyed
// by server id.
func Cached(home string, servers []config.Server) map[string][]*mcp.Tool {
	out := map[string][]*mcp.Tool{}
	for _, s := range servers {
		if s.Disabled {
			continue
		}
		if tools := Load(home, s); tools != nil {
			out[s.ID] = tools
		}
	}
	return out
}
