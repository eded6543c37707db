package memory_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/native/memory"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

type answer struct {
	Count   int            `json:"count"`
	Entries []memory.Entry `json:"entries"`
}

type stored struct {
	Stored bool         `json:"stored"`
	Entry  memory.Entry `json:"entry"`
}

// compact is an entry's value as one line of JSON.
func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func keys(a answer) []string {
	var out []string
	for _, e := range a.Entries {
		out = append(out, e.Key)
	}
	return out
}

func TestStoreUpsertsAndReturnsTheEntry(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	text, isErr := routertest.CallText(t, cs, "memory_store", map[string]any{
		"session_id": "s1", "key": "db-choice", "kind": "decision",
		"value": map[string]any{"engine": "sqlite", "why": "pure Go"}, "tags": []string{"storage", "adr"},
	})
	if isErr {
		t.Fatal(text)
	}
	first := routertest.DecodeJSON[stored](t, text)
	e := first.Entry
	if !first.Stored || e.ID != memory.ID("s1", "db-choice") || e.SessionID != "s1" || e.Kind != "decision" ||
		compact(t, e.Value) != `{"engine":"sqlite","why":"pure Go"}` || strings.Join(e.Tags, ",") != "storage,adr" ||
		e.CreatedAt == 0 || e.UpdatedAt != e.CreatedAt || e.ExpiresAt != nil {
		t.Errorf("stored = %s", text)
	}
	if !strings.Contains(text, `"expires_at": null`) {
		t.Errorf("a decision never expires, so expires_at is null: %s", text)
	}

	// Same key again: updated in place, creation time kept.
	routertest.WaitFor(t, "the clock to move", func() bool { return time.Now().UnixMilli() > e.UpdatedAt })
	text, _ = routertest.CallText(t, cs, "memory_store", map[string]any{"session_id": "s1", "key": "db-choice", "kind": "decision", "value": "sqlite after all"})
	second := routertest.DecodeJSON[stored](t, text).Entry
	if second.ID != e.ID || second.CreatedAt != e.CreatedAt || second.UpdatedAt <= e.UpdatedAt || compact(t, second.Value) != `"sqlite after all"` || len(second.Tags) != 0 {
		t.Errorf("update = %s (first %+v)", text, e)
	}
	list := routertest.DecodeJSON[answer](t, func() string {
		s, _ := routertest.CallText(t, cs, "memory_list", map[string]any{"session_id": "s1"})
		return s
	}())
	if list.Count != 1 || compact(t, list.Entries[0].Value) != `"sqlite after all"` {
		t.Errorf("list after upsert = %+v", list)
	}
	// Sessions are separate.
	other := routertest.DecodeJSON[answer](t, func() string {
		s, _ := routertest.CallText(t, cs, "memory_list", map[string]any{"session_id": "s2"})
		return s
	}())
	if other.Count != 0 || other.Entries == nil {
		t.Errorf("other session = %+v", other)
	}
}

func TestDefaultLifetimesByKind(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	want := map[string]int64{
		"knowledge": 0, "context": 0, "decision": 0,
		"working": 3600000, "task": 4 * 3600000, "result": 24 * 3600000,
		"error": 7 * 24 * 3600000, "metric": 30 * 24 * 3600000,
	}
	for kind, ttl := range want {
		text, isErr := routertest.CallText(t, cs, "memory_store", map[string]any{"session_id": "ttl", "key": kind, "kind": kind, "value": 1})
		if isErr {
			t.Fatal(text)
		}
		e := routertest.DecodeJSON[stored](t, text).Entry
		switch {
		case ttl == 0 && e.ExpiresAt != nil:
			t.Errorf("%s expires at %d; want never", kind, *e.ExpiresAt)
		case ttl > 0 && (e.ExpiresAt == nil || *e.ExpiresAt-e.UpdatedAt != ttl):
			t.Errorf("%s: %s; want a lifetime of %d ms", kind, text, ttl)
		}
	}
	// ttl_ms overrides the kind; zero or less never expires.
	text, _ := routertest.CallText(t, cs, "memory_store", map[string]any{"session_id": "ttl", "key": "k1", "kind": "knowledge", "value": 1, "ttl_ms": 5000})
	if e := routertest.DecodeJSON[stored](t, text).Entry; e.ExpiresAt == nil || *e.ExpiresAt-e.UpdatedAt != 5000 {
		t.Errorf("ttl_ms 5000 = %s", text)
	}
	for _, ttl := range []int{0, -1} {
		text, _ = routertest.CallText(t, cs, "memory_store", map[string]any{"session_id": "ttl", "key": "w", "kind": "working", "value": 1, "ttl_ms": ttl})
		if e := routertest.DecodeJSON[stored](t, text).Entry; e.ExpiresAt != nil {
			t.Errorf("ttl_ms %d = %s; want no expiry", ttl, text)
		}
	}
}

func TestExpiredEntriesAreNeverReturned(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	// Written an hour ago with a one-minute lifetime, through the same
	// database the router reads.
	s := memory.NewStore(filepath.Join(h.Dir, "home", "memory"))
	s.Now = func() time.Time { return time.Now().Add(-time.Hour) }
	minute := time.Minute
	if _, err := s.Put("s", "stale", "working", json.RawMessage(`"old"`), []string{"t"}, &minute); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put("s", "old-but-lasting", "knowledge", json.RawMessage(`"kept"`), []string{"t"}, nil); err != nil {
		t.Fatal(err)
	}
	list := routertest.DecodeJSON[answer](t, func() string {
		s, _ := routertest.CallText(t, cs, "memory_list", map[string]any{"session_id": "s"})
		return s
	}())
	if strings.Join(keys(list), ",") != "old-but-lasting" {
		t.Errorf("list = %v; the expired entry must not appear", keys(list))
	}
	found := routertest.DecodeJSON[answer](t, func() string {
		s, _ := routertest.CallText(t, cs, "memory_search", map[string]any{"session_id": "s", "query": "old"})
		return s
	}())
	if strings.Join(keys(found), ",") != "old-but-lasting" {
		t.Errorf("search = %v; the expired entry must not appear", keys(found))
	}
	// The next write purges it from the file too. Find hides expired
	// entries, so read with the writer's clock of an hour ago, at which
	// the stale entry is still live: it is found before the write and
	// gone after it only if the write really deleted it.
	before, err := s.Find("s", memory.Query{})
	if err != nil || strings.Join(keys(answer{Entries: before}), ",") != "old-but-lasting,stale" && strings.Join(keys(answer{Entries: before}), ",") != "stale,old-but-lasting" {
		t.Fatalf("the stale entry must still be stored before the write: %v %v", keys(answer{Entries: before}), err)
	}
	if _, isErr := routertest.CallText(t, cs, "memory_store", map[string]any{"session_id": "s", "key": "fresh", "kind": "task", "value": 1}); isErr {
		t.Fatal("memory_store failed")
	}
	after, err := s.Find("s", memory.Query{})
	got := keys(answer{Entries: after})
	if err != nil || len(got) != 2 || slices.Contains(got, "stale") || !slices.Contains(got, "fresh") {
		t.Errorf("after the write the stored entries are %v (%v); the expired one must be deleted", got, err)
	}
}

func TestSearchFiltersAndOrder(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	put := func(key, kind string, value any, tags ...string) {
		t.Helper()
		if tags == nil {
			tags = []string{}
		}
		text, isErr := routertest.CallText(t, cs, "memory_store", map[string]any{"session_id": "q", "key": key, "kind": kind, "value": value, "tags": tags})
		if isErr {
			t.Fatal(text)
		}
		// Distinct update times make the order observable.
		e := routertest.DecodeJSON[stored](t, text).Entry
		routertest.WaitFor(t, "the clock to move", func() bool { return time.Now().UnixMilli() > e.UpdatedAt })
	}
	put("build-cmd", "knowledge", "make test", "ci", "build")
	put("flaky-test", "error", map[string]any{"test": "TestRace", "note": "Times out on CI"}, "ci")
	put("next-step", "task", "write the README")
	put("latency", "metric", 42.5, "perf")

	search := func(args map[string]any) answer {
		t.Helper()
		args["session_id"] = "q"
		text, isErr := routertest.CallText(t, cs, "memory_search", args)
		if isErr {
			t.Fatal(text)
		}
		return routertest.DecodeJSON[answer](t, text)
	}
	if got := keys(search(map[string]any{})); strings.Join(got, ",") != "latency,next-step,flaky-test,build-cmd" {
		t.Errorf("all, newest first = %v", got)
	}
	if got := keys(search(map[string]any{"query": "CI"})); strings.Join(got, ",") != "flaky-test" {
		t.Errorf("query in the value, any case = %v", got)
	}
	if got := keys(search(map[string]any{"query": "STEP"})); strings.Join(got, ",") != "next-step" {
		t.Errorf("query in the key = %v", got)
	}
	if got := keys(search(map[string]any{"tags": []string{"ci"}})); strings.Join(got, ",") != "flaky-test,build-cmd" {
		t.Errorf("tag ci = %v", got)
	}
	if got := keys(search(map[string]any{"tags": []string{"ci", "build"}})); strings.Join(got, ",") != "build-cmd" {
		t.Errorf("tags must all match = %v", got)
	}
	if got := keys(search(map[string]any{"kind": "metric"})); strings.Join(got, ",") != "latency" {
		t.Errorf("kind = %v", got)
	}
	a := search(map[string]any{"limit": 2})
	if a.Count != 2 || strings.Join(keys(a), ",") != "latency,next-step" {
		t.Errorf("limit 2 = %+v", a)
	}
	if a := search(map[string]any{"limit": 0}); a.Count != 4 {
		t.Errorf("limit 0 falls back to 20: %+v", a)
	}
	if got := search(map[string]any{"query": "nothing like this"}); got.Count != 0 || got.Entries == nil {
		t.Errorf("no match = %+v", got)
	}
	list := routertest.DecodeJSON[answer](t, func() string {
		s, _ := routertest.CallText(t, cs, "memory_list", map[string]any{"session_id": "q", "kind": "error"})
		return s
	}())
	if list.Count != 1 || list.Entries[0].Key != "flaky-test" {
		t.Errorf("list kind error = %+v", list)
	}
}

func TestErrorsAndMissingArguments(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	cs := h.Connect(nil)
	kinds := "knowledge, context, task, result, error, metric, decision, working"
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"memory_store", map[string]any{"session_id": "", "key": "k", "kind": "task", "value": 1}, "Missing required argument: session_id"},
		{"memory_store", map[string]any{"session_id": "s", "key": "", "kind": "task", "value": 1}, "Missing required argument: key"},
		{"memory_search", map[string]any{"session_id": ""}, "Missing required argument: session_id"},
		{"memory_list", map[string]any{"session_id": ""}, "Missing required argument: session_id"},
		{"memory_search", map[string]any{"session_id": "s", "kind": "gossip"}, "Invalid 'kind'. Must be one of: " + kinds},
		{"memory_list", map[string]any{"session_id": "s", "kind": ""}, "Invalid 'kind'. Must be one of: " + kinds},
	}
	for _, c := range cases {
		if text, isErr := routertest.CallText(t, cs, c.tool, c.args); !isErr || text != c.want {
			t.Errorf("%s %v = %v %q, want %q", c.tool, c.args, isErr, text, c.want)
		}
	}
	// A kind outside the enum, or a missing value, is caught by the schema.
	for _, args := range []map[string]any{
		{"session_id": "s", "key": "k", "kind": "gossip", "value": 1},
		{"session_id": "s", "key": "k", "kind": "task"},
	} {
		if text, isErr := routertest.CallText(t, cs, "memory_store", args); !isErr || !strings.Contains(text, "Invalid arguments for 'memory_store'") {
			t.Errorf("memory_store %v = %v %q", args, isErr, text)
		}
	}
	// An integer the schema accepts but an int64 cannot hold is the same
	// kind of answer, from the handler's decoding, not a JSON-RPC error.
	big := map[string]any{"session_id": "s", "key": "k", "kind": "task", "value": 1, "ttl_ms": 1e300}
	if text, isErr := routertest.CallText(t, cs, "memory_store", big); !isErr || !strings.HasPrefix(text, "Invalid arguments for 'memory_store':\n- at '/ttl_ms': number ") {
		t.Errorf("memory_store %v = %v %q", big, isErr, text)
	}
	// A null value is a value.
	if text, isErr := routertest.CallText(t, cs, "memory_store", map[string]any{"session_id": "s", "key": "nothing", "kind": "context", "value": nil}); isErr || !strings.Contains(text, `"value": null`) {
		t.Errorf("null value = %v %s", isErr, text)
	}
}

func TestMemorySurvivesARestart(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	env := map[string]string{"EVOKORE_HOME": home}
	h1 := routertest.New(t, map[string]any{}, env)
	cs1 := h1.Connect(nil)
	if text, isErr := routertest.CallText(t, cs1, "memory_store", map[string]any{"session_id": "agent/7 main", "key": "goal", "kind": "context", "value": "ship issue 7", "tags": []string{"plan"}}); isErr {
		t.Fatal(text)
	}
	_ = cs1.Close()
	h1.Server.Close()

	h2 := routertest.New(t, map[string]any{}, env)
	cs2 := h2.Connect(nil)
	text, _ := routertest.CallText(t, cs2, "memory_search", map[string]any{"session_id": "agent/7 main", "tags": []string{"plan"}})
	a := routertest.DecodeJSON[answer](t, text)
	if a.Count != 1 || a.Entries[0].Key != "goal" || compact(t, a.Entries[0].Value) != `"ship issue 7"` {
		t.Errorf("after restart = %s", text)
	}
	if p := memory.NewStore(filepath.Join(home, "memory")).PathFor("agent/7 main"); filepath.Dir(p) != filepath.Join(home, "memory") || !strings.HasSuffix(p, ".db") {
		t.Errorf("database path = %s", p)
	}
}
