package proxy

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/manifest"
)

// The tool-list cache lives in package manifest, which previews read
// without importing the supervisor.

func loadManifest(home string, s config.Server) []*mcp.Tool { return manifest.Load(home, s) }

func saveManifest(home string, s config.Server, tools []*mcp.Tool) error {
	return manifest.Save(home, s, tools)
}
