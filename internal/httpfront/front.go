// Package httpfront is evokore's HTTP face: the routes and the small
// public documents around the MCP endpoint. It takes the MCP handler
// (sessions live behind it) and small interfaces, and knows nothing of the
// router. Every route sits behind the one guard (package httpguard): Host,
// Origin, bearer token, security headers and deadlines.
//
// Routes:
//
//	/mcp                                    MCP streamable HTTP (any query string)
//	GET /health                             {"status":"ok"|"degraded","transport":"streamable-http"}, public
//	/metrics                                Prometheus text
//	/ws/approvals                           the approvals feed (package approvalfeed)
//	GET /.well-known/oauth-protected-resource[/mcp]
//	                                        RFC 9728 metadata, no token needed, with auth on
//	anything else                           404 {"error":"Not found"}
//
// Routes match the path decoded and cleaned once (httpguard.Canonical),
// and the same lookup picks the guard: /metrics/ is /metrics.
//
// Only /mcp, /metrics and /ws/approvals need the token: load balancers
// and clients discovering the authorization server have none. Host and
// Origin are checked on every route: a load balancer that probes /health
// by address needs that address among the allowed hosts.
package httpfront

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/evokore/evokore/internal/httpguard"
)

// Realm is the realm of the WWW-Authenticate challenge.
const Realm = "evokore-mcp"

// MetadataPath is where the protected-resource metadata is served.
const MetadataPath = "/.well-known/oauth-protected-resource"

// Options configure the front.
type Options struct {
	// MCP serves /mcp.
	MCP http.Handler
	// Metrics serves /metrics; nil answers 503.
	Metrics http.Handler
	// Approvals serves /ws/approvals, the live approvals feed operators'
	// dashboards connect to; nil answers 404.
	Approvals http.Handler
	// Guard is the guard's configuration: hosts, origins, the
	// authenticator (nil serves without authentication), how a principal
	// becomes a caller. Its Unauthorized is the front's own.
	Guard httpguard.Options
	// Health lists what keeps the router from serving as configured; it
	// appears as /health's details.
	Health func() []string
	// Degraded lists what this replica is serving without (the shared
	// session store, say); when it lists anything, /health's status is
	// "degraded", still with 200: the replica serves what needs no shared
	// state, and a balancer must not pull every replica at once.
	Degraded func() []string
	// Resource is the MCP endpoint's canonical URL, from configuration
	// (never from a request's Host): the metadata's resource and the
	// challenge's resource_metadata are built from it.
	Resource string
	// AuthorizationServers are announced in the metadata.
	AuthorizationServers []string
}

// ApprovalsPath is where the approvals feed is served.
const ApprovalsPath = "/ws/approvals"

type front struct {
	o       Options
	routes  map[string]http.Handler // by canonical path, each behind its guard
	missing http.Handler            // any other path: Host and Origin checked, then 404
}

// New builds the front.
func New(o Options) http.Handler {
	f := &front{o: o}
	g := o.Guard
	g.Unauthorized = f.unauthorized
	authed := httpguard.New(g).Wrap
	g.Auth = nil
	public := httpguard.New(g).Wrap
	// One table says, for each path, both which guard judges it and what
	// serves it: the token a path needs is decided on the same path that
	// is served, so no spelling of a path can reach a handler by way of
	// the other guard.
	f.routes = map[string]http.Handler{
		"/health":             public(http.HandlerFunc(f.health)),
		MetadataPath:          public(http.HandlerFunc(f.metadata)),
		MetadataPath + "/mcp": public(http.HandlerFunc(f.metadata)),
		"/mcp":                authed(o.MCP),
		"/metrics":            authed(http.HandlerFunc(f.metrics)),
		ApprovalsPath:         authed(http.HandlerFunc(f.approvals)),
	}
	f.missing = public(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { notFound(w) }))
	return f
}

// ServeHTTP finds the route by the request's path decoded and cleaned
// once (httpguard.Canonical): "/metrics/" and "//mcp" are "/metrics" and
// "/mcp", "/ws/%61pprovals" is the approvals feed, and each is judged as
// the route it reaches.
func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = httpguard.Canonical(r)
	if h, ok := f.routes[r.URL.Path]; ok {
		h.ServeHTTP(w, r)
		return
	}
	f.missing.ServeHTTP(w, r)
}

func (f *front) approvals(w http.ResponseWriter, r *http.Request) {
	if f.o.Approvals == nil {
		notFound(w)
		return
	}
	f.o.Approvals.ServeHTTP(w, r)
}

func (f *front) metrics(w http.ResponseWriter, r *http.Request) {
	if f.o.Metrics == nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "Metrics are off"})
		return
	}
	f.o.Metrics.ServeHTTP(w, r)
}

func (f *front) unauthorized(w http.ResponseWriter, _ *http.Request, err error) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="`+Realm+`", resource_metadata="`+f.metadataURL()+`"`)
	WriteRPCError(w, http.StatusUnauthorized, -32001, "Unauthorized", map[string]any{"detail": err.Error()})
}

func (f *front) health(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "Method not allowed"})
		return
	}
	body := struct {
		Status    string   `json:"status"`
		Transport string   `json:"transport"`
		Details   []string `json:"details,omitempty"`
	}{Status: "ok", Transport: "streamable-http"}
	if f.o.Health != nil {
		body.Details = f.o.Health()
	}
	if f.o.Degraded != nil {
		if d := f.o.Degraded(); len(d) > 0 {
			body.Status = "degraded"
			body.Details = append(body.Details, d...)
		}
	}
	writeJSON(w, http.StatusOK, body)
}

// metadataURL is where RFC 9728 puts the resource's metadata: the
// well-known path inserted before the resource's path.
func (f *front) metadataURL() string {
	u, err := url.Parse(f.o.Resource)
	if err != nil || u.Host == "" {
		return MetadataPath
	}
	path := strings.TrimSuffix(u.Path, "/")
	return u.Scheme + "://" + u.Host + MetadataPath + path
}

func (f *front) metadata(w http.ResponseWriter, r *http.Request) {
	if f.o.Guard.Auth == nil || r.Method != http.MethodGet && r.Method != http.MethodHead {
		notFound(w)
		return
	}
	servers := f.o.AuthorizationServers
	if servers == nil {
		servers = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 f.o.Resource,
		"authorization_servers":    servers,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "evokore",
	})
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]string{"error": "Not found"})
}

func writeJSON(w http.ResponseWriter, status int, v any) { httpguard.WriteJSON(w, status, v) }

// rpcError is a JSON-RPC error response, in EVOKORE-MCP's field order;
// a nil ID is written as null.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	Error   rpcField        `json:"error"`
	ID      json.RawMessage `json:"id"`
}

type rpcField struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// WriteRPCError answers an HTTP request with a JSON-RPC error that
// belongs to no request (id null), as EVOKORE-MCP does for 401 and 404.
func WriteRPCError(w http.ResponseWriter, status, code int, message string, data any) {
	WriteRPCErrorID(w, status, nil, code, message, data)
}

// WriteRPCErrorID answers an HTTP request with a JSON-RPC error for the
// request whose id is id (nil: null, the id of no request).
func WriteRPCErrorID(w http.ResponseWriter, status int, id json.RawMessage, code int, message string, data any) {
	if !json.Valid(id) {
		id = nil
	}
	writeJSON(w, status, rpcError{JSONRPC: "2.0", Error: rpcField{Code: code, Message: message, Data: data}, ID: id})
}
