package sessionstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/sessionstore"
	"github.com/evokore/evokore/internal/testutil"
)

// BenchmarkRedisSessionResume is what a replica pays to resume a session
// it has never seen: one Load of a record with 20 activations from a
// loopback Redis. The file store's Load is measured alongside.
func BenchmarkRedisSessionResume(b *testing.B) {
	ctx := context.Background()
	now := time.Now()
	rec := sessionstore.Record{ID: "bench-session", Role: "developer", Subject: "alice", Tenant: "t1",
		Metadata: map[string]string{"clientName": "bench", "clientVersion": "1"}, Created: now, LastSeen: now}
	for i := range 20 {
		rec.Activations = append(rec.Activations, fmt.Sprintf("server%d_tool_number_%d", i%4, i))
	}
	for _, kind := range []string{"redis", "file"} {
		b.Run(kind, func(b *testing.B) {
			vars := map[string]string{"EVOKORE_SESSION_STORE": kind, "EVOKORE_HOME": b.TempDir()}
			if kind == "redis" {
				vars["EVOKORE_REDIS_URL"] = testutil.RedisServer(b)
			}
			st, err := sessionstore.Open(sessionstore.ReadOptions(config.NewEnv(vars), vars["EVOKORE_HOME"], time.Hour))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			if err := st.Save(ctx, rec); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := st.Load(ctx, rec.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
