// Package netguard is evokore's private-address policy for outbound HTTP
// the router makes on its own (fetch_skill and list_registry downloads,
// webhook posts): only public addresses may be reached unless an operator
// opted in with a setting (EVOKORE_HTTP_ALLOW_PRIVATE,
// EVOKORE_WEBHOOKS_ALLOW_PRIVATE).
//
// The check runs in the dialer, on the address DNS actually returned, for
// the first request and every redirect, so neither a hostname that
// resolves to 127.0.0.1 nor a redirect to 169.254.169.254 gets through.
package netguard

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// BlockedError is a dial refused because the address is not public.
type BlockedError struct {
	Addr netip.Addr
	// Setting is the variable that would allow it.
	Setting string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("blocked: %s is a loopback, private, link-local or otherwise non-public address "+
		"(set %s=true to allow it)", e.Addr, e.Setting)
}

// nonPublic are ranges netip's predicates do not cover.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"), // NAT64: may embed a private IPv4
}

// Blocked reports whether addr is not a public address.
func Blocked(addr netip.Addr) bool {
	addr = addr.Unmap()
	if addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsInterfaceLocalMulticast() || addr.IsMulticast() || addr.IsUnspecified() || !addr.IsValid() {
		return true
	}
	for _, p := range nonPublic {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// Dialer returns a dialer that refuses non-public addresses unless
// allowPrivate; setting names the variable the refusal points to.
func Dialer(timeout time.Duration, allowPrivate bool, setting string) *net.Dialer {
	return &net.Dialer{
		Timeout: timeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			if allowPrivate {
				return nil
			}
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			addr, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("blocked: cannot check address %q", host)
			}
			if Blocked(addr) {
				return &BlockedError{Addr: addr, Setting: setting}
			}
			return nil
		},
	}
}
