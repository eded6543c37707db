package sharedstate_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// Three whole routers, each with its own fixture child, configured with
// EVOKORE_SESSION_STORE=redis: a server limit of N calls a minute admits
// N calls of one subject in total however the calls are spread over
// them. The same routers without Redis admit N each.
func TestAssembledRoutersShareTheirRateLimit(t *testing.T) {
	const n = 4
	url := testutil.RedisServer(t)
	for _, shared := range []bool{true, false} {
		env := map[string]string{}
		if shared {
			env = map[string]string{"EVOKORE_SESSION_STORE": "redis", "EVOKORE_REDIS_URL": url, "EVOKORE_REDIS_KEY_PREFIX": "asm:"}
		}
		var clients []*mcp.ClientSession
		for range 3 {
			fx := routertest.Fixture(t)
			fx["rateLimit"] = map[string]any{"requestsPerMinute": n}
			h := routertest.New(t, map[string]any{"fx": fx}, env)
			clients = append(clients, h.ConnectAs(nil, ingress.SessionOptions{Identity: session.Identity{Subject: "alice", Tenant: "team"}}))
			h.Booted()
		}
		passed := 0
		for i := range 3 * n {
			_, err := clients[i%3].CallTool(context.Background(), &mcp.CallToolParams{Name: "fx_echo", Arguments: map[string]any{"message": "hello there, replica"}})
			var rpc *jsonrpc.Error
			switch {
			case err == nil:
				passed++
			case errors.As(err, &rpc) && strings.HasPrefix(rpc.Message, "Rate limit exceeded for server 'fx'."):
			default:
				t.Fatalf("call %d: %v", i, err)
			}
		}
		want := n
		if !shared {
			want = 3 * n
		}
		if passed != want {
			t.Fatalf("shared=%v: %d of %d calls passed, want %d", shared, passed, 3*n, want)
		}
	}
}
