package events

import "testing"

type collect []Event

func (c *collect) Handle(e Event) { *c = append(*c, e) }

// A bus listens once a sink is added; events reach the sink stamped.
func TestListeningAndEmit(t *testing.T) {
	var nilBus *Bus
	if nilBus.Listening() {
		t.Fatal("a nil bus listens")
	}
	b := NewBus(nil, 42)
	if b.Listening() {
		t.Fatal("a bus without sinks listens")
	}
	var got collect
	b.Add(&got)
	if !b.Listening() {
		t.Fatal("a bus with a sink does not listen")
	}
	b.Emit(Event{Type: ToolCall})
	if len(got) != 1 || got[0].Pid != 42 || got[0].Time.IsZero() {
		t.Fatalf("sink got %+v", got)
	}
}
