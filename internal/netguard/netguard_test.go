package netguard_test

import (
	"net/netip"
	"testing"

	"github.com/evokore/evokore/internal/netguard"
)

func TestBlockedAddresses(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "127.8.9.10": true, "::1": true, "10.1.2.3": true, "172.16.0.1": true, "172.31.255.255": true,
		"192.168.1.1": true, "169.254.169.254": true, "0.0.0.0": true, "::": true, "fe80::1": true, "fc00::1": true,
		"fd12:3456::1": true, "::ffff:127.0.0.1": true, "::ffff:10.0.0.1": true, "100.64.0.1": true, "224.0.0.1": true,
		"ff02::1": true, "64:ff9b::a00:1": true, "240.0.0.1": true,
		"8.8.8.8": false, "1.1.1.1": false, "172.32.0.1": false, "2606:4700:4700::1111": false, "151.101.1.69": false,
	} {
		if got := netguard.Blocked(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Blocked(%s) = %v, want %v", addr, got, want)
		}
	}
}
