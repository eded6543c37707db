package childauth

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"golang.org/x/oauth2"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/testutil"
)

// Callers' entries in Redis: each owner finds only its own; the stored
// bytes hold no token; an entry moved under another owner's key, or
// read with another key file, does not open.
func TestRedisTokensKeepEachCallersOwn(t *testing.T) {
	opt, err := redis.ParseURL(testutil.RedisServer(t))
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opt)
	t.Cleanup(func() { _ = client.Close() })
	secret := []byte(strings.Repeat("shared-key-file-", 3))
	store, err := NewRedisTokens(client, "t:", secret)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	spec := config.Server{ID: "remote", Transport: config.TransportHTTP, URL: "https://mcp.example/mcp"}
	alice, bob := principal{spec, OwnerOf("team", "alice")}, principal{spec, OwnerOf("team", "bob")}
	if err := store.save(ctx, alice, &Entry{TokenURL: "https://as.example/token", Token: &oauth2.Token{AccessToken: "alice-access", RefreshToken: "alice-refresh"}}); err != nil {
		t.Fatal(err)
	}
	if e, err := store.load(ctx, alice); err != nil || e == nil || e.Token.AccessToken != "alice-access" {
		t.Fatalf("alice's own entry: %+v %v", e, err)
	}
	if e, err := store.load(ctx, bob); err != nil || e != nil {
		t.Fatalf("bob found %+v %v", e, err)
	}
	if e, err := store.load(ctx, principal{spec: spec}); err != nil || e != nil {
		t.Fatalf("the router's own lookup found %+v %v", e, err)
	}
	raw, err := client.Get(ctx, store.key(alice)).Bytes()
	if err != nil || strings.Contains(string(raw), "alice-access") || strings.Contains(string(raw), "alice-refresh") {
		t.Fatalf("stored bytes show the token (%v)", err)
	}
	// Copied under bob's key: the seal is bound to alice's.
	if err := client.Set(ctx, store.key(bob), raw, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if e, err := store.load(ctx, bob); err == nil || e != nil {
		t.Fatalf("alice's entry under bob's key opened: %+v", e)
	}
	other, _ := NewRedisTokens(client, "t:", []byte(strings.Repeat("another-key-file-", 3)))
	if e, err := other.load(ctx, alice); err == nil || e != nil || !strings.Contains(err.Error(), "EVOKORE_APPROVAL_KEY_FILE") {
		t.Fatalf("another key file opened alice's entry: %+v %v", e, err)
	}
}
