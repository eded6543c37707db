package events_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/events"
)

// texts have every encoding encoding/json escapes: HTML characters,
// control characters, U+2028, invalid UTF-8, quotes and backslashes.
var texts = []string{"", "plain", "<script>&</script>", "q\"uo\\te\n\t\x01\x7f", "日本 🎉 \u2028\u2029", "bad\xffutf8"}

// AppendJSON writes what json.Marshal wrote for every field set and
// unset, every text, and the times, latencies and arguments the router
// records.
func TestAppendJSONIsMarshal(t *testing.T) {
	when := time.Date(2026, 5, 6, 7, 8, 9, 120_000_000, time.UTC)
	ms := []float64{0, 0.001, 1.5, 12.345, 1e21, 1e-7}
	var cases []events.Event
	for i, s := range texts {
		lat := ms[i%len(ms)]
		cases = append(cases,
			events.Event{},
			events.Event{Time: when, Type: events.Type(s)},
			events.Event{Time: when.Add(time.Duration(i) * time.Millisecond), Type: events.ToolCall, Session: s, Tenant: s, Role: s,
				Transport: s, Client: s, Tool: s, Server: s, Source: s, Outcome: s, LatencyMs: &lat,
				Args: json.RawMessage(`{"a":"` + "\\u003c" + `","b":[1,2.5,null]}`), Approval: s, Mode: s, Detail: s,
				Remote: s, Run: s, Pid: i * 1000},
			events.Event{Time: when.In(time.FixedZone("x", 3600)), Type: events.Reload, Detail: s, Pid: -i},
		)
	}
	zero := 0.0
	cases = append(cases, events.Event{Time: when, Type: events.ToolError, LatencyMs: &zero, Args: json.RawMessage(`{}`)},
		events.Event{Time: when, Type: events.ToolCall, Args: json.RawMessage{}})
	for _, e := range cases {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := events.AppendJSON([]byte("x"), e)
		if !ok || string(got) != "x"+string(want) {
			t.Errorf("AppendJSON(%+v)\n= %s\nMarshal wrote\n %s", e, got, want)
		}
	}
}

// Where Marshal fails, AppendJSON says so and leaves dst as it was.
func TestAppendJSONRefusesWhatMarshalRefuses(t *testing.T) {
	nan := math.NaN()
	for _, e := range []events.Event{
		{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Type: events.ToolCall},
		{Time: time.Now(), Type: events.ToolCall, LatencyMs: &nan},
	} {
		if _, err := json.Marshal(e); err == nil {
			t.Fatalf("Marshal(%+v) works; the test expected it to fail", e)
		}
		if got, ok := events.AppendJSON([]byte("x"), e); ok || string(got) != "x" {
			t.Errorf("AppendJSON(%+v) = %q, %v", e, got, ok)
		}
	}
}
