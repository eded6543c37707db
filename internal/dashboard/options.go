package dashboard

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/evokore/evokore/internal/approvalfeed"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/httpguard"
)

// DefaultPort is EVOKORE-MCP's dashboard port (EVOKORE_DASHBOARD_PORT's
// declared default).
const DefaultPort = config.DefaultDashboardPort

// ReadOptions reads the dashboard's settings from env:
// EVOKORE_DASHBOARD_HOST (default 127.0.0.1), EVOKORE_DASHBOARD_PORT
// (8899), EVOKORE_DASHBOARD_TOKEN, EVOKORE_DASHBOARD_ROLE,
// EVOKORE_DASHBOARD_APPROVAL_WS_URL (comma-separated feed URLs) and
// EVOKORE_DASHBOARD_APPROVAL_WS_TOKEN (the feeds' bearer token). It
// returns the listen address. Listening beyond loopback without a token
// is an error: anyone on the network could approve calls.
func ReadOptions(env config.Env, home string) (Options, string, []string, error) {
	var warnings []string
	o := Options{Home: home, Token: strings.TrimSpace(env.Get("EVOKORE_DASHBOARD_TOKEN"))}
	if r := strings.TrimSpace(env.Get("EVOKORE_DASHBOARD_ROLE")); r != "" {
		if approvalfeed.RoleRank(r) == 0 {
			warnings = append(warnings, fmt.Sprintf("EVOKORE_DASHBOARD_ROLE=%q is not readonly, developer or admin; using the default", r))
		} else {
			o.Role = r
		}
	}
	host := strings.TrimSpace(env.Get("EVOKORE_DASHBOARD_HOST"))
	if host == "" {
		host = config.DefaultDashboardHost
	}
	port := DefaultPort
	if p := strings.TrimSpace(env.Get("EVOKORE_DASHBOARD_PORT")); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 65535 {
			return o, "", warnings, fmt.Errorf("EVOKORE_DASHBOARD_PORT=%q is not a port", p)
		}
		port = n
	}
	if !httpguard.IsLoopback(host) {
		if o.Token == "" {
			return o, "", warnings, errors.New("the dashboard listens beyond loopback only with EVOKORE_DASHBOARD_TOKEN set")
		}
		// Beyond loopback the token guards every route, so a rebound name
		// gains nothing: a specific address is accepted as the Host, and
		// on a wildcard address (whose names no setting lists) any Host.
		o.AllowedHosts = []string{host}
		if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil && ip.IsUnspecified() {
			o.AllowedHosts = []string{"*"}
		}
	}
	for _, u := range strings.Split(env.Get("EVOKORE_DASHBOARD_APPROVAL_WS_URL"), ",") {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		if !strings.HasPrefix(u, "ws://") && !strings.HasPrefix(u, "wss://") {
			warnings = append(warnings, fmt.Sprintf("approval feed %q is not a ws:// or wss:// URL; ignored", u))
			continue
		}
		o.Feeds = append(o.Feeds, u)
	}
	// Unlike EVOKORE-MCP, the dashboard's own token is never sent to a
	// router: a secret of one service is not handed to another.
	o.FeedToken = strings.TrimSpace(env.Get("EVOKORE_DASHBOARD_APPROVAL_WS_TOKEN"))
	return o, net.JoinHostPort(host, strconv.Itoa(port)), warnings, nil
}
