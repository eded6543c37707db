package proxy_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/testutil"
)

// BenchmarkCallToolOverTheWire is the supervisor's share of a proxied
// call to a stdio child whose caller takes the result as bytes (the
// transports' own path): what the line carrier and the era adapter cost
// per call, the child's reading goroutine included, without the router's
// pipeline or a client transport.
func BenchmarkCallToolOverTheWire(b *testing.B) {
	cat := catalog.NewStore(nil, []string{"fx"})
	s := proxy.New(proxy.Options{
		Servers: []config.Server{{ID: "fx", Command: testutil.FixtureServer(b)}},
		Catalog: cat, BootTimeout: 20 * time.Second, RequestTimeout: 20 * time.Second, ShutdownGrace: time.Second,
	})
	b.Cleanup(s.Close)
	s.Start(nil)
	<-s.Booted()
	entry, ok := cat.Snapshot().Lookup("fx_echo")
	if !ok {
		b.Fatalf("fx_echo is not listed: %+v", s.Status())
	}
	args := json.RawMessage(`{"message":"a longer benchmark message"}`)
	// The router keeps each call (its observers see it): it lives on the
	// heap whatever the supervisor does with it.
	var last *router.Call
	b.ReportAllocs()
	for b.Loop() {
		c := &router.Call{Entry: entry, Args: args, Raw: &router.RawResult{}}
		last = c
		res, err := s.CallTool(context.Background(), c)
		if err != nil || res != c.Raw.Result || len(c.Raw.Bytes) == 0 {
			b.Fatalf("fx_echo = %+v, %v", res, err)
		}
	}
	escape = last
}

var escape *router.Call
