package proxy

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/router"
)

// Reconfigure keeps the very child of a server whose definition did not
// change (a new rate limit or cooldown is policy, not a restart), replaces
// a changed one, and a call that reaches a retired child is refused with
// why instead of being sent to a process about to stop.
func TestReconfigureKeepsUnchangedChildrenAndRefusesRetiredOnes(t *testing.T) {
	rpm := 10.0
	ms := 5
	servers := []config.Server{
		{ID: "keep", Command: "never-run", Disabled: true},
		{ID: "limits", Command: "never-run", Disabled: true},
		{ID: "change", Command: "never-run", Disabled: true},
		{ID: "gone", Command: "never-run", Disabled: true},
	}
	s := New(Options{Servers: servers, Catalog: catalog.NewStore(nil, nil)})
	t.Cleanup(s.Close)
	before := map[string]*child{}
	for _, c := range s.children() {
		before[c.spec.ID] = c
	}
	next := slices.Clone(servers[:3])
	next[1].RateLimit = &config.RateLimit{RequestsPerMinute: &rpm}
	next[1].CooldownMs = &ms
	next[2].Args = []string{"--v2"}
	next = append(next, config.Server{ID: "added", Command: "never-run", Disabled: true})
	ch := s.Reconfigure(next)
	if !slices.Equal(ch.Kept, []string{"keep", "limits"}) || !slices.Equal(ch.Restarted, []string{"change"}) ||
		!slices.Equal(ch.Added, []string{"added"}) || !slices.Equal(ch.Removed, []string{"gone"}) {
		t.Fatalf("change %+v", ch)
	}
	for _, id := range []string{"keep", "limits"} {
		if c, _ := s.child(id); c != before[id] {
			t.Errorf("%s got a new child", id)
		}
	}
	if c, _ := s.child("change"); c == before["change"] {
		t.Error("the changed server kept its child")
	}
	if _, ok := s.child("gone"); ok {
		t.Error("the removed server is still configured")
	}
	if again := s.Reconfigure(next); !again.Empty() || len(again.Kept) != 4 {
		t.Errorf("the same servers again: %+v", again)
	}

	// The narrow window: a call that looked the child up before the
	// reload and is dispatched after it.
	if before["gone"].enter() {
		t.Fatal("a retired child admitted a call")
	}
	s.set.Store(&childSet{list: []*child{before["gone"]}, byID: map[string]*child{"gone": before["gone"]}})
	_, err := s.CallTool(context.Background(), &router.Call{Entry: &catalog.Entry{Name: "gone_echo", Server: "gone", Original: "echo"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Message != MsgServerRemoved("gone_echo", "gone") {
		t.Errorf("a call to a retired child: %v", err)
	}
}
