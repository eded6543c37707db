package config

import (
	"errors"
	"net"
	"strconv"
	"strings"
)

// Authentication modes of the HTTP transport.
const (
	AuthStatic = "static"
	AuthJWT    = "jwt"
)

// HTTPSettings are the variables of the streamable HTTP transport.
type HTTPSettings struct {
	Enabled bool   // EVOKORE_HTTP_MODE
	Host    string // EVOKORE_HTTP_HOST, default 127.0.0.1
	Port    int    // EVOKORE_HTTP_PORT, default 3100

	AuthRequired bool     // EVOKORE_AUTH_REQUIRED
	AuthMode     string   // EVOKORE_AUTH_MODE: static (default) or jwt
	Tokens       []string // EVOKORE_AUTH_TOKEN, comma-separated
	JWKSURI      string   // EVOKORE_OAUTH_JWKS_URI
	Issuer       string   // EVOKORE_OAUTH_ISSUER
	Audience     string   // EVOKORE_OAUTH_AUDIENCE
	// Resource is EVOKORE_OAUTH_RESOURCE, the MCP endpoint's public URL
	// announced in the protected-resource metadata.
	Resource string
	// AnyAudience is EVOKORE_OAUTH_ALLOW_ANY_AUDIENCE=unsafe: JWT mode
	// then accepts a token minted for any audience. Only that exact
	// value counts.
	AnyAudience bool
	// TenantScoping (EVOKORE_TENANT_SCOPING) scopes sessions to the JWT sub.
	TenantScoping bool

	AllowedHosts   []string // EVOKORE_HTTP_ALLOWED_HOSTS, comma-separated
	AllowedOrigins []string // EVOKORE_HTTP_ALLOWED_ORIGINS, comma-separated
}

// Addr is host:port.
func (h HTTPSettings) Addr() string { return net.JoinHostPort(h.Host, strconv.Itoa(h.Port)) }

// ReadHTTPSettings parses the HTTP transport's variables; values it
// cannot use are reported and replaced by their defaults.
func ReadHTTPSettings(env Env) (HTTPSettings, []string) {
	v := NewVars(env)
	h := HTTPSettings{
		Enabled:        v.Bool("EVOKORE_HTTP_MODE"),
		Host:           v.String("EVOKORE_HTTP_HOST"),
		Port:           DefaultHTTPPort,
		AuthRequired:   v.StrictBool("EVOKORE_AUTH_REQUIRED"),
		AuthMode:       strings.ToLower(strings.TrimSpace(env.Get("EVOKORE_AUTH_MODE"))),
		Tokens:         v.List("EVOKORE_AUTH_TOKEN"),
		JWKSURI:        v.String("EVOKORE_OAUTH_JWKS_URI"),
		Issuer:         v.String("EVOKORE_OAUTH_ISSUER"),
		Audience:       v.String("EVOKORE_OAUTH_AUDIENCE"),
		Resource:       v.String("EVOKORE_OAUTH_RESOURCE"),
		AnyAudience:    v.String(AnyAudienceVar) == unsafeValue,
		TenantScoping:  v.StrictBool("EVOKORE_TENANT_SCOPING"),
		AllowedHosts:   v.List("EVOKORE_HTTP_ALLOWED_HOSTS"),
		AllowedOrigins: v.List("EVOKORE_HTTP_ALLOWED_ORIGINS"),
	}
	if raw := strings.TrimSpace(env.Get("EVOKORE_HTTP_PORT")); raw != "" {
		if n, err := strconv.Atoi(raw); err == nil && n >= 0 && n <= 65535 {
			h.Port = n
		} else {
			v.Warn("Ignoring EVOKORE_HTTP_PORT=" + strconv.Quote(raw) + ": want a port number.")
		}
	}
	if raw := strings.TrimSpace(env.Get(AnyAudienceVar)); raw != "" && raw != unsafeValue {
		v.Warn("Ignoring " + AnyAudienceVar + "=" + strconv.Quote(raw) + ": only the value unsafe turns the audience check off.")
	}
	switch h.AuthMode {
	case "":
		h.AuthMode = DefaultAuthMode
	case AuthStatic, AuthJWT:
	default:
		// An unknown mode must not fall back to something weaker: with
		// auth required, it refuses every request.
		v.Warn("Unknown EVOKORE_AUTH_MODE '" + h.AuthMode + "': every request will be refused. Use static or jwt.")
	}
	return h, v.Warnings
}

// AnyAudienceVar turns JWT mode's audience check off when set to
// unsafe; any other value is ignored, so a "true" copied from another
// flag cannot switch it off by accident.
const AnyAudienceVar = "EVOKORE_OAUTH_ALLOW_ANY_AUDIENCE"

const unsafeValue = "unsafe"

// ErrNoAudience is JWT mode with no audience to require.
var ErrNoAudience = errors.New("JWT mode needs an audience to check tokens against: set EVOKORE_OAUTH_AUDIENCE or EVOKORE_OAUTH_RESOURCE (this server's public URL, e.g. https://mcp.example.com/mcp), or " + AnyAudienceVar + "=unsafe to accept tokens minted for any service")

// ForJWT returns h with the audience JWT mode requires when serving on
// listen: EVOKORE_OAUTH_AUDIENCE, else the resource URL (the MCP
// authorization spec has the resource server check that a token was
// issued for it): EVOKORE_OAUTH_RESOURCE, else http://<listen>/mcp when
// listen names one host and port, which then also becomes the Resource
// the metadata announces. With none of them and no unsafe opt-out it
// returns ErrNoAudience.
func (h HTTPSettings) ForJWT(listen string) (HTTPSettings, error) {
	switch {
	case h.Audience != "":
		return h, nil
	case h.Resource != "":
		h.Audience = h.Resource
		return h, nil
	case h.AnyAudience:
		return h, nil
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil || host == "" || port == "0" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified() {
		// Clients reach a wildcard or ephemeral listener at an address
		// this process cannot know.
		return h, ErrNoAudience
	}
	h.Resource = "http://" + net.JoinHostPort(host, port) + "/mcp"
	h.Audience = h.Resource
	return h, nil
}
