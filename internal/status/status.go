// Package status is what the router reports about a child server: the
// record proxy_server_status and evokore://server/status show. It is its
// own package so that the tools, resources and previews that report it do
// not depend on the supervisor that launches processes.
package status

import "time"

// States of a child server.
const (
	Disabled  = "disabled"
	Booting   = "booting"
	Connected = "connected"
	Error     = "error"
	// NeedsAuthorization is an HTTP child whose server wants a user to
	// authorize evokore first (`evokore auth login <id>`).
	NeedsAuthorization = "needs authorization"
)

// Server is one child as proxy_server_status reports it.
type Server struct {
	ID                  string     `json:"id"`
	Status              string     `json:"status"`
	ConnectionType      string     `json:"connectionType"`
	ErrorCount          int        `json:"errorCount"`
	LastPing            *time.Time `json:"lastPing"`
	RegisteredToolCount int        `json:"registeredToolCount"`
	LastError           string     `json:"lastError,omitempty"`
	// Scope is who shares the child: "shared", "subject" or "session".
	Scope string `json:"scope"`
	// Instances counts the running per-caller instances of a child
	// whose scope is not shared.
	Instances int `json:"instances,omitempty"`
	// NamePrefix is what its tools' names start with as clients see them
	// (config.Server.NamePrefix: "<prefix>_", or ""); not reported.
	NamePrefix string `json:"-"`
	// Shortened maps each listed name of this server's tools that is
	// shorter than its "<prefix><tool>" (over 64 characters) to that
	// full name.
	Shortened map[string]string `json:"shortened,omitempty"`
}
