package server

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPHandler serves MCP over streamable HTTP: one session view per MCP
// session, built by the same code Connect uses. identify says who a new
// session acts for (its role and identity); nil gives every session the
// server's role. The SDK connects the sessions itself; each view binds to
// its session on its first request.
func (s *Server) HTTPHandler(identify func(*http.Request) SessionOptions, opts *mcp.StreamableHTTPOptions) http.Handler {
	// The SDK also asks for a server on requests of existing sessions,
	// only to read the protocol versions it supports: one shared view
	// answers those without building a session's.
	probe := s.newView(SessionOptions{}).mcp
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if s.isClosing() {
			return nil
		}
		if r.Header.Get("Mcp-Session-Id") != "" {
			return probe
		}
		s.Start()
		var so SessionOptions
		if identify != nil {
			so = identify(r)
		}
		return s.newView(so).mcp
	}, opts)
}
