package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	rt "github.com/evokore/evokore/internal/testutil/routertest"
)

// BenchmarkReload50Servers is one reload of a 50-server mcp.config.json
// whose servers do not change, while their 50 children run and a session
// is connected: read and validate both files, diff the children (all
// kept), swap the policy's rules and the generation. permissions.yml
// alternates between two rule sets, so every reload swaps real rules.
// Besides ns/op (the whole reload), it reports its two parts: reading
// and validating the files (the CUE check of 50 servers, as at start),
// and diffing and swapping.
func BenchmarkReload50Servers(b *testing.B) {
	servers := map[string]any{}
	for i := range 50 {
		servers[fmt.Sprintf("s%02d", i)] = rt.Fixture(b)
	}
	h := rt.New(b, servers, map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	perms := filepath.Join(h.Dir, "permissions.yml")
	rules := []string{"rules:\n  s00_echo: allow\n", "rules:\n  s00_echo: require_approval\n"}
	h.Connect(nil)
	h.Booted()
	var read, swap time.Duration
	n := 0
	for i := 0; b.Loop(); i++ {
		if err := os.WriteFile(perms, []byte(rules[i%2]), 0o644); err != nil {
			b.Fatal(err)
		}
		rep, err := h.Server.Reload()
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Servers.Kept) != 50 || !rep.Servers.Empty() {
			b.Fatalf("reload changed children: %+v", rep.Servers)
		}
		read += rep.Read
		swap += rep.Swap
		n++
	}
	b.ReportMetric(float64(read.Microseconds())/float64(n), "read+validate-µs/op")
	b.ReportMetric(float64(swap.Microseconds())/float64(n), "diff+swap-µs/op")
}
