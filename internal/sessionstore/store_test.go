package sessionstore

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestMemoryRoundTripExpiryAndIsolationFromCallers(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_000_000, 0)
	m := NewMemory(time.Minute)
	m.Now = func() time.Time { return now }
	r := Record{ID: "a", Role: "developer", Tenant: "t1", Activations: []string{"x"}, Created: now, LastSeen: now}
	if err := m.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Activations[0] = "changed"
	got, err := m.Load(ctx, "a")
	if err != nil || got.Role != "developer" || got.Activations[0] != "x" {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := m.Load(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("expired session loaded: %v", err)
	}
	if list, _ := m.List(ctx); len(list) != 0 {
		t.Fatalf("List after expiry = %+v", list)
	}
}
