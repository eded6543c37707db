package httpsession

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/httpfront"
	"github.com/evokore/evokore/internal/ingress"
)

// resumed serves the SDK path of a session this replica resumed from the
// store: its view is connected to a streamable transport of its own, from
// the session's saved state (sessions.go), and the transport serves its
// requests once they pass the checks the go-sdk's handler makes before it
// hands a request to a session it holds.
//
// One thing differs from a session the handler holds, and it cannot be
// helped with go-sdk v1.8.0: the handler hands its sessions the request's
// protocol version through a context key of its own, which nothing else
// can set, and without it a session takes a request for the oldest
// version. So a resumed session's event streams on the SDK path begin
// without the priming event of 2025-11-25 (SEP-1699; the byte path's
// still have it), and a client that loses such a stream before its first
// event cannot resume it. The refusals that hang on the version are made
// here instead: a version the router does not speak, a sessionless
// version on a session, and a batch after 2025-06-18.
type resumed struct {
	t *mcp.StreamableServerTransport
	v ingress.View
}

// serve serves one request of the session.
func (s resumed) serve(w http.ResponseWriter, q *request) {
	if v := q.version; v != "" && !era.Sessionless(v) && !slices.Contains(mcp.SupportedProtocolVersions(), v) {
		http.Error(w, fmt.Sprintf("Bad Request: unsupported protocol version %q (supported: %s)", v, strings.Join(mcp.SupportedProtocolVersions(), ",")), http.StatusBadRequest)
		return
	}
	switch q.r.Method {
	case http.MethodGet:
		if _, stream := accepts(q.r); !stream {
			http.Error(w, "GET needs Accept: text/event-stream", http.StatusBadRequest)
			return
		}
	case http.MethodPost:
		if !acceptable(w, q) {
			return
		}
	case http.MethodDelete:
		s.v.Close()
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	s.t.ServeHTTP(w, q.r)
}

// acceptable answers a POST the session must not take, and reports
// whether it may.
func acceptable(w http.ResponseWriter, q *request) bool {
	json, stream := accepts(q.r)
	switch {
	case !plainContent(q.r):
		http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
	case !json || !stream:
		http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
	case era.Sessionless(q.version):
		httpfront.WriteRPCError(w, http.StatusBadRequest, mcp.CodeUnsupportedProtocolVersion,
			fmt.Sprintf("protocol version %q has no sessions; send its requests without Mcp-Session-Id", q.version), nil)
	case !era.Batches(q.version) && isBatch(q.body):
		http.Error(w, fmt.Sprintf("JSON-RPC batches are not supported under protocol version %s", q.version), http.StatusBadRequest)
	default:
		return true
	}
	return false
}
