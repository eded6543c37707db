package sharedstate_test

import (
	"context"
	"testing"

	"github.com/evokore/evokore/internal/policy"
)

// BenchmarkSharedRateLimitTake is the cost the shared rate limit adds to
// a proxied call: one GCRA script over a tool and a server bucket on a
// loopback Redis.
func BenchmarkSharedRateLimitTake(b *testing.B) {
	sh := replicasB(b)
	l := policy.NewLimits(servers(1e9, 1_000_000_000), nil)
	l.Share(sh.Limiter)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := l.TakeContext(ctx, "", "s", "t"); err != nil {
			b.Fatal(err)
		}
	}
}
