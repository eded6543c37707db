package session

import (
	"slices"
	"testing"
	"time"
)

func TestActivateReportsOnlyNewNamesAndSignals(t *testing.T) {
	s := New("s1", "")
	ch := s.Changed()
	if got := s.Activate("a", "b"); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("added = %v", got)
	}
	select {
	case <-ch:
	default:
		t.Fatal("activation should signal Changed")
	}
	ch = s.Changed()
	if got := s.Activate("a"); got != nil {
		t.Errorf("re-activation added %v", got)
	}
	select {
	case <-ch:
		t.Error("re-activating should not signal")
	default:
	}
	if !s.Active("a") || !s.Active("b") || s.Active("c") {
		t.Error("Active disagrees with Activate")
	}
}

func TestActivationsAreBoundedLeastRecentFirst(t *testing.T) {
	s := New("s1", "")
	s.MaxActive = 3
	s.Activate("a", "b", "c")
	s.Activate("a") // a is now the most recent
	s.Activate("d") // evicts b, the least recently activated
	for name, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
		if s.Active(name) != want {
			t.Errorf("Active(%s) = %v, want %v", name, !want, want)
		}
	}
}

func TestIdleSessionLosesActivations(t *testing.T) {
	now := time.Unix(1000, 0)
	s := New("s1", "")
	s.Now = func() time.Time { return now }
	s.TTL = time.Hour
	s.Touch()
	s.Activate("a")
	now = now.Add(59 * time.Minute)
	if s.Touch() || !s.Active("a") {
		t.Fatal("a session used within its TTL keeps its activations")
	}
	gen := s.Generation()
	now = now.Add(61 * time.Minute)
	if !s.Touch() {
		t.Fatal("Touch after the TTL should report the reset")
	}
	if s.Active("a") || s.Generation() == gen {
		t.Error("the idle session should have lost its activations and changed generation")
	}
}

func TestInvalidateIsTakenOnce(t *testing.T) {
	s := New("s1", "")
	gen := s.Generation()
	s.Invalidate()
	if s.Generation() == gen {
		t.Error("Invalidate should change the generation")
	}
	if !s.TakeInvalidated() || s.TakeInvalidated() {
		t.Error("TakeInvalidated should report once")
	}
}

func TestNewIDIsAUUID(t *testing.T) {
	a, b := NewID("stdio"), NewID("stdio")
	if a == b || len(a) != len("stdio-")+36 || a[14] != '-' || a[20] != '4' {
		t.Errorf("ids %q %q", a, b)
	}
}

// Activations round-trip through SetActivations in order, a record
// cannot hold more than MaxActive, and an unchanged set signals nothing.
func TestSetActivationsRestoresInOrderAndBounds(t *testing.T) {
	s := New("a", "")
	s.MaxActive = 3
	s.Activate("x", "y")
	s.Activate("x")
	if got := s.Activations(); !slices.Equal(got, []string{"y", "x"}) {
		t.Fatalf("Activations = %v", got)
	}
	r := New("b", "")
	r.MaxActive = 3
	changed := r.Changed()
	if !r.SetActivations([]string{"a", "b", "c", "d"}) {
		t.Fatal("SetActivations reported no change")
	}
	select {
	case <-changed:
	default:
		t.Error("no Changed signal")
	}
	if got := r.Activations(); !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Errorf("bounded Activations = %v", got)
	}
	if r.SetActivations([]string{"d", "c", "b"}) {
		t.Error("the same set reported as a change")
	}
}

// The zero Session and a literal with only an id (as tests and benchmarks
// build them) work for every method, with the same behaviour as New's.
func TestZeroSessionIsUsable(t *testing.T) {
	for name, s := range map[string]*Session{"zero": new(Session), "literal": {ID: "x"}} {
		t.Run(name, func(t *testing.T) {
			if s.Active("a") || len(s.Activations()) != 0 || s.TakeInvalidated() {
				t.Fatal("a zero session has no activations and nothing pending")
			}
			if s.Touch() {
				t.Error("the first Touch of a zero session reset it")
			}
			ch := s.Changed()
			if ch == nil {
				t.Fatal("Changed returned a nil channel, which never fires")
			}
			gen := s.Generation()
			if got := s.Activate("a", "b"); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("added = %v", got)
			}
			select {
			case <-ch:
			default:
				t.Error("activation did not signal Changed")
			}
			if s.Generation() == gen || !s.Active("a") {
				t.Error("activation did not take")
			}
			s.Invalidate()
			if !s.TakeInvalidated() {
				t.Error("Invalidate was not reported")
			}
			if !s.SetActivations([]string{"c"}) || !slices.Equal(s.Activations(), []string{"c"}) {
				t.Errorf("SetActivations: %v", s.Activations())
			}
			s.TTL = time.Nanosecond
			s.Touch()
			s.Activate("d")
			s.Now = func() time.Time { return time.Now().Add(time.Hour) }
			if !s.Touch() || s.Active("d") {
				t.Error("an idle zero session kept its activations past its TTL")
			}
		})
	}
}
