package sessionstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/sessionstore"
	"github.com/evokore/evokore/internal/testutil"
)

func settings(t *testing.T, vars map[string]string) sessionstore.Options {
	t.Helper()
	return sessionstore.ReadOptions(config.NewEnv(vars), t.TempDir(), time.Hour)
}

func open(t *testing.T, vars map[string]string) (sessionstore.Store, sessionstore.Options) {
	t.Helper()
	s := settings(t, vars)
	st, err := sessionstore.Open(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st, s
}

// Every backend keeps the same contract: what was saved loads back whole,
// a second Save replaces, Delete forgets, List is newest first, and a
// hostile id is a session not found.
func TestStoresKeepTheSameContract(t *testing.T) {
	kinds := map[string]map[string]string{
		"memory": {},
		"file":   {"EVOKORE_SESSION_STORE": "file"},
		"redis":  {"EVOKORE_SESSION_STORE": "redis"},
	}
	for name, vars := range kinds {
		t.Run(name, func(t *testing.T) {
			if name == "redis" {
				vars["EVOKORE_REDIS_URL"] = testutil.RedisServer(t)
			}
			st, _ := open(t, vars)
			ctx := context.Background()
			t0 := time.Now().Truncate(time.Millisecond)
			a := sessionstore.Record{ID: "sess-a", Role: "developer", Subject: "alice", Tenant: "t1",
				Activations: []string{"fs_read", "gh_issue"}, Metadata: map[string]string{"client": "x"}, Created: t0, LastSeen: t0}
			b := sessionstore.Record{ID: "sess-b", Created: t0.Add(time.Second), LastSeen: t0.Add(time.Second)}
			for _, r := range []sessionstore.Record{a, b} {
				if err := st.Save(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			got, err := st.Load(ctx, "sess-a")
			if err != nil {
				t.Fatal(err)
			}
			if got.Role != "developer" || got.Subject != "alice" || got.Tenant != "t1" || !slices.Equal(got.Activations, a.Activations) ||
				got.Metadata["client"] != "x" || !got.Created.Equal(t0) || !got.LastSeen.Equal(t0) {
				t.Fatalf("Load = %+v, want %+v", got, a)
			}
			a.Activations = append(a.Activations, "third")
			if err := st.Save(ctx, a); err != nil {
				t.Fatal(err)
			}
			if got, _ := st.Load(ctx, "sess-a"); len(got.Activations) != 3 {
				t.Fatalf("Save did not replace: %+v", got)
			}
			list, err := st.List(ctx)
			if err != nil || len(list) != 2 || list[0].ID != "sess-b" || list[1].ID != "sess-a" {
				t.Fatalf("List = %+v, %v", list, err)
			}
			for _, id := range []string{"", "..", "../escape", "a/b", "a*", "x\x00y", string(make([]byte, 200))} {
				if _, err := st.Load(ctx, id); !errors.Is(err, sessionstore.ErrNotFound) {
					t.Errorf("Load(%q) = %v, want not found", id, err)
				}
			}
			if err := st.Delete(ctx, "sess-a"); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Load(ctx, "sess-a"); !errors.Is(err, sessionstore.ErrNotFound) {
				t.Fatalf("deleted session loaded: %v", err)
			}
			if err := st.Delete(ctx, "never-was"); err != nil {
				t.Fatalf("Delete of an unknown id: %v", err)
			}
		})
	}
}

// The file store writes EVOKORE-MCP's shape under EVOKORE_HOME, and a file
// that is not a record (truncated, another id, a directory) is simply a
// session not found.
func TestFileStoreShapeAndCorruptFiles(t *testing.T) {
	st, s := open(t, map[string]string{"EVOKORE_SESSION_STORE": "file"})
	ctx := context.Background()
	now := time.Now()
	if err := st.Save(ctx, sessionstore.Record{ID: "s1", Role: "admin", Created: now, LastSeen: now}); err != nil {
		t.Fatal(err)
	}
	dir := s.Dir
	data, err := os.ReadFile(filepath.Join(dir, "s1.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"sessionId":"s1"`, `"activatedTools":[]`, `"role":"admin"`, `"createdAt":1`, `"lastAccessedAt":1`} {
		if !bytes.Contains(data, []byte(field)) {
			t.Errorf("session file lacks %s:\n%s", field, data)
		}
	}
	bad := map[string]string{
		"trunc.json": `{"sessionId":"trunc","createdAt":`,
		"other.json": `{"sessionId":"someone-else","createdAt":1,"lastAccessedAt":1,"activatedTools":[]}`,
		"null.json":  `null`,
	}
	for name, content := range bad {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "adir.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"trunc", "other", "null", "adir"} {
		if _, err := st.Load(ctx, id); !errors.Is(err, sessionstore.ErrNotFound) {
			t.Errorf("Load(%s) = %v, want not found", id, err)
		}
	}
	if list, err := st.List(ctx); err != nil || len(list) != 1 || list[0].ID != "s1" {
		t.Fatalf("List = %+v, %v", list, err)
	}
}

// Redis forgets an idle session by itself: the key's expiry is the TTL,
// and each Save restarts it.
func TestRedisStoreExpiresIdleSessions(t *testing.T) {
	url := testutil.RedisServer(t)
	s := settings(t, map[string]string{"EVOKORE_SESSION_STORE": "redis", "EVOKORE_REDIS_URL": url, "EVOKORE_REDIS_KEY_PREFIX": "t1:"})
	s.TTL = 300 * time.Millisecond
	st, err := sessionstore.Open(s)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs := st.(*sessionstore.Redis)
	ctx := context.Background()
	if err := st.Save(ctx, sessionstore.Record{ID: "idle", Created: time.Now(), LastSeen: time.Now()}); err != nil {
		t.Fatal(err)
	}
	ttl, err := rs.Client().PTTL(ctx, "t1:session:idle").Result()
	if err != nil || ttl <= 0 || ttl > 300*time.Millisecond {
		t.Fatalf("PTTL = %v, %v; want the session TTL on the key", ttl, err)
	}
	// Wait for Redis to say the key is gone (a positive signal), then the
	// store must agree.
	for {
		n, err := rs.Client().Exists(ctx, "t1:session:idle").Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := st.Load(ctx, "idle"); !errors.Is(err, sessionstore.ErrNotFound) {
		t.Fatalf("expired session loaded: %v", err)
	}
	// Garbage under a session key is not a session.
	rs.Client().Set(ctx, "t1:session:junk", "\xff{not json", 0)
	if _, err := st.Load(ctx, "junk"); !errors.Is(err, sessionstore.ErrNotFound) {
		t.Fatalf("junk loaded: %v", err)
	}
}

func TestOpenRefusesUnknownKindsAndDeadRedis(t *testing.T) {
	for _, vars := range []map[string]string{
		{"EVOKORE_SESSION_STORE": "postgres"},
		{"EVOKORE_SESSION_STORE": "redis", "EVOKORE_REDIS_URL": "redis://127.0.0.1:1/0"},
		{"EVOKORE_SESSION_STORE": "redis", "EVOKORE_REDIS_URL": "http://nope"},
	} {
		if st, err := sessionstore.Open(settings(t, vars)); err == nil {
			st.Close()
			t.Errorf("Open(%v) succeeded", vars)
		}
	}
}
