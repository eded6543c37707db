package native

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/search"
	"github.com/evokore/evokore/internal/session"
)

// Host is what native managers may use of the router. Managers receive it
// when the router is assembled; they never reach for the wiring itself.
type Host struct {
	// Config returns the mcp.config.json in force (empty when there is
	// none; nil Config means the same). A reload replaces it, so handlers
	// ask at each call rather than keep it.
	Config func() *config.MCPConfig
	// Catalog is the tool catalog; plugin reloads publish into it.
	Catalog *catalog.Store
	// Call runs another tool through the full pipeline (permissions,
	// approvals, limits) on behalf of sess: skill_creator writes through
	// the filesystem child this way.
	Call func(ctx context.Context, sess *session.Session, name string, args any) (*mcp.CallToolResult, error)
	// Sessions lists the connected sessions.
	Sessions func() []*session.Session
	// Semantic reranks searches with embeddings; nil when
	// discovery.embeddings is not configured.
	Semantic *search.Semantic
	// Log receives what the router reports on stderr.
	Log *slog.Logger
}
