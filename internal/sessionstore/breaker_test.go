package sessionstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/sessionstore"
	"github.com/evokore/evokore/internal/testutil"
)

// A frozen Redis (SIGSTOP: the port accepts, nothing answers) costs one
// timeout, not one per command: the command that met it fails with the
// error Redis gave, every later one at once with ErrUnavailable without
// being sent; once Redis answers again (a probe asks), commands go
// through and find what was there. A reply of Redis's own, an error it
// sent, stops nothing.
func TestAFrozenRedisIsNotAskedAgainUntilItAnswers(t *testing.T) {
	url, freeze, thaw := testutil.RedisServerWithFreeze(t)
	st, _ := open(t, map[string]string{"EVOKORE_SESSION_STORE": "redis", "EVOKORE_REDIS_URL": url, "EVOKORE_REDIS_KEY_PREFIX": "frozen:"})
	ctx := context.Background()
	if err := st.Save(ctx, sessionstore.Record{ID: "live", Created: time.Now(), LastSeen: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// An error Redis sends (a key of another type) is an answer.
	rs := st.(*sessionstore.Redis)
	rs.Client().LPush(ctx, "frozen:session:alist", "x")
	if _, err := st.Load(ctx, "alist"); err == nil || errors.Is(err, sessionstore.ErrUnavailable) {
		t.Fatalf("loading a list key: %v, want Redis's own error", err)
	}
	if _, err := st.Load(ctx, "live"); err != nil {
		t.Fatalf("after Redis answered with an error: %v", err)
	}

	freeze()
	_, err := st.Load(ctx, "live")
	if err == nil || errors.Is(err, sessionstore.ErrUnavailable) {
		t.Fatalf("the first command to a frozen Redis: %v, want the error it met", err)
	}
	for i := range 20 {
		if _, err := st.Load(ctx, "live"); !errors.Is(err, sessionstore.ErrUnavailable) {
			t.Fatalf("load %d after the first timeout: %v, want ErrUnavailable (not sent)", i, err)
		}
		if err := st.Save(ctx, sessionstore.Record{ID: "live", Created: time.Now(), LastSeen: time.Now()}); !errors.Is(err, sessionstore.ErrUnavailable) {
			t.Fatalf("save %d after the first timeout: %v, want ErrUnavailable", i, err)
		}
	}
	thaw()
	for {
		r, err := st.Load(ctx, "live")
		if err == nil {
			if r.ID != "live" {
				t.Fatalf("after the thaw: %+v", r)
			}
			break
		}
		if !errors.Is(err, sessionstore.ErrUnavailable) {
			t.Fatalf("after the thaw: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
