// Package httpfront is evokore's HTTP face: the routes, authentication,
// DNS-rebinding defences and the small public documents around the MCP
// endpoint. It takes the MCP handler (sessions live behind it) and small
// interfaces, and knows nothing of the router.
//
// Routes:
//
//	/mcp                                    MCP streamable HTTP (any query string)
//	GET /health                             {"status":"ok"|"degraded","transport":"streamable-http"}, public
//	/metrics, /metrics/                     Prometheus text
//	GET /.well-known/oauth-protected-resource[/mcp]
//	                                        RFC 9728 metadata, public, with auth on
//	anything else                           404 {"error":"Not found"}
//
// /mcp and /metrics first check the Host and Origin headers (loopback
// names, plus the configured hosts and origins), then the bearer token
// when authentication is on. /health skips both so load balancers can
// probe it by address.
package httpfront

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/evokore/evokore/internal/auth"
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
	// dashboards connect to; nil answers 404. It sits behind the same
	// Host, Origin and credential checks as /mcp.
	Approvals http.Handler
	// Auth checks bearer tokens; nil serves without authentication.
	Auth auth.Authenticator
	// OnAuthFailure, when set, is told of every request refused for its
	// credentials (the audit log), with the reason, never the credential.
	OnAuthFailure func(r *http.Request, reason string)
	// Health lists what keeps the router from serving as configured; it
	// appears as /health's details.
	Health func() []string
	// Degraded lists what this replica is serving without (the shared
	// session store, say); when it lists anything, /health's status is
	// "degraded", still with 200: the replica serves what needs no shared
	// state, and a balancer must not pull every replica at once.
	Degraded func() []string
	// AllowedHosts are Host values accepted beyond loopback names, as
	// "name" or "name:port"; "*" accepts any.
	AllowedHosts []string
	// AllowedOrigins are Origin values accepted beyond loopback ones, as
	// "scheme://host[:port]"; "*" accepts any.
	AllowedOrigins []string
	// Resource is the MCP endpoint's canonical URL for the metadata;
	// empty derives it from the request.
	Resource string
	// AuthorizationServers are announced in the metadata.
	AuthorizationServers []string
}

// ApprovalsPath is where the approvals feed is served.
const ApprovalsPath = "/ws/approvals"

type front struct{ o Options }

// New builds the front.
func New(o Options) http.Handler { return &front{o: o} }

type principalKey struct{}

// PrincipalFrom returns who the request was authenticated as.
func PrincipalFrom(ctx context.Context) (auth.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(auth.Principal)
	return p, ok
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case p == "/health":
		f.health(w, r)
	case p == MetadataPath || p == MetadataPath+"/mcp":
		if f.o.Auth == nil || r.Method != http.MethodGet && r.Method != http.MethodHead {
			notFound(w)
			return
		}
		f.metadata(w, r)
	case p == "/mcp":
		f.guarded(w, r, f.o.MCP)
	case p == ApprovalsPath && f.o.Approvals != nil:
		f.guarded(w, r, f.o.Approvals)
	case p == "/metrics" || p == "/metrics/":
		if f.o.Metrics == nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "Metrics are off"})
			return
		}
		f.guarded(w, r, f.o.Metrics)
	default:
		notFound(w)
	}
}

// guarded checks Host, Origin and credentials before next.
func (f *front) guarded(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if !f.hostAllowed(r.Host) {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "Forbidden: Host not allowed"})
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !f.originAllowed(o) {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "Forbidden: Origin not allowed"})
		return
	}
	if f.o.Auth != nil {
		p, err := f.o.Auth.Authenticate(r)
		if err != nil {
			if f.o.OnAuthFailure != nil {
				f.o.OnAuthFailure(r, err.Error())
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+Realm+`", resource_metadata="`+f.metadataURL(r)+`"`)
			WriteRPCError(w, http.StatusUnauthorized, -32001, "Unauthorized", map[string]any{"detail": err.Error()})
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
	}
	next.ServeHTTP(w, r)
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

// resource is the MCP endpoint's URL as clients address it.
func (f *front) resource(r *http.Request) string {
	if f.o.Resource != "" {
		return f.o.Resource
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/mcp"
}

// metadataURL is where RFC 9728 puts the resource's metadata: the
// well-known path inserted before the resource's path.
func (f *front) metadataURL(r *http.Request) string {
	u, err := url.Parse(f.resource(r))
	if err != nil || u.Host == "" {
		return MetadataPath
	}
	path := strings.TrimSuffix(u.Path, "/")
	return u.Scheme + "://" + u.Host + MetadataPath + path
}

func (f *front) metadata(w http.ResponseWriter, r *http.Request) {
	servers := f.o.AuthorizationServers
	if servers == nil {
		servers = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 f.resource(r),
		"authorization_servers":    servers,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "evokore",
	})
}

// hostAllowed accepts loopback names and the configured hosts: a page on
// another site that rebinds its name to this address sends its own name.
func (f *front) hostAllowed(host string) bool {
	if host == "" {
		return false
	}
	if slices.Contains(f.o.AllowedHosts, "*") {
		return true
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.Trim(name, "[]")
	if IsLoopback(name) {
		return true
	}
	for _, a := range f.o.AllowedHosts {
		if strings.EqualFold(a, host) || strings.EqualFold(strings.Trim(a, "[]"), name) {
			return true
		}
	}
	return false
}

// originAllowed accepts loopback origins and the configured ones; a
// browser sends Origin on cross-site requests, so a page elsewhere is
// refused even when its name resolves here.
func (f *front) originAllowed(origin string) bool {
	if slices.Contains(f.o.AllowedOrigins, "*") {
		return true
	}
	for _, a := range f.o.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return IsLoopback(u.Hostname())
}

// IsLoopback reports whether a host name or address is this machine's
// loopback.
func IsLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]string{"error": "Not found"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// rpcError is a JSON-RPC error response with no id, in EVOKORE-MCP's
// field order.
type rpcError struct {
	JSONRPC string   `json:"jsonrpc"`
	Error   rpcField `json:"error"`
	ID      *int     `json:"id"`
}

type rpcField struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// WriteRPCError answers an HTTP request with a JSON-RPC error that
// belongs to no request (id null), as EVOKORE-MCP does for 401 and 404.
func WriteRPCError(w http.ResponseWriter, status, code int, message string, data any) {
	writeJSON(w, status, rpcError{JSONRPC: "2.0", Error: rpcField{Code: code, Message: message, Data: data}})
}
