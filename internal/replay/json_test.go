package replay

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

var entryTexts = []string{"", "ok", "<b>&</b>", "q\"uo\\te\n\t\x01\x7f", "日本 🎉 \u2028\u2029", "bad\xffutf8",
	"2026-01-02T03:04:05.678Z"}

// An Entry's line is what json.Marshal wrote, for every field set and
// unset and every kind of text.
func TestEntryAppendJSONIsMarshal(t *testing.T) {
	lat := []int64{0, 7, -3, 1 << 40}
	var entries []Entry
	for i, s := range entryTexts {
		entries = append(entries, Entry{}, Entry{TS: s, Tool: s, Summary: s, Outcome: s},
			Entry{TS: s, Tool: s, Summary: s, Outcome: s, Output: s, InvocationTS: s, LatencyMS: &lat[i%len(lat)], Source: s})
	}
	for _, e := range entries {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.AppendJSON([]byte("x")); string(got) != "x"+string(want) {
			t.Errorf("AppendJSON(%+v)\n= %s\nMarshal wrote\n %s", e, got, want)
		}
	}
}

// summaryCases are recorded arguments (as package redact writes them:
// keys sorted, compact) with every kind of member Summarize tells apart.
var summaryCases = []string{
	`{}`,
	`{"command":"ls -la","path":"/x"}`,
	`{"path":"/x","query":"q"}`,
	`{"command":"","path":"/x"}`,
	`{"command":3,"name":"n"}`,
	`{"a":1,"b":"two","c":true,"d":false,"e":null,"f":[1],"g":{"h":1}}`,
	`{"a b":1,"a":2,"a=":3,"a\u003cb":"\u003chtml\u003e"}`,
	`{"n":[0,1e21,1e-7,0.1,1234567,12345678901234567000,-0,1.5,100,1e+06]}`,
	`{"big":1e21,"exp":1e-7,"int":1000000,"neg":-0.5,"x":12345678901234567000,"y":100000000000000000000}`,
	`{"api_key":"[REDACTED]","password":"[REDACTED]","session":"s1","spin":"[REDACTED]","token":"[REDACTED]"}`,
	`{"description":"\u003cdesc\u003e","prompt":"p","skill_name":"s"}`,
	`{"text":"line\nnext \"quoted\" é 🎉"}`,
	`{"url":"https://example.com/` + strings.Repeat("é", 300) + `"}`,
	`{"` + strings.Repeat("k", 150) + `":1,"` + strings.Repeat("j", 150) + `":2}`,
}

// SummarizeJSON says what Summarize says of the same arguments decoded.
func TestSummarizeJSONIsSummarize(t *testing.T) {
	for _, c := range summaryCases {
		checkSummary(t, []byte(c))
	}
}

func FuzzSummarizeJSON(f *testing.F) {
	for _, c := range summaryCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m map[string]any
		if json.Unmarshal(b, &m) != nil || m == nil {
			return
		}
		// Recorded arguments are Marshal's output: canonical, no
		// repeated names.
		canon, _ := json.Marshal(m)
		checkSummary(t, canon)
	})
}

func checkSummary(t *testing.T, b []byte) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if got, want := SummarizeJSON(b), Summarize(m); got != want {
		t.Errorf("%s:\nSummarizeJSON %q\nSummarize     %q", b, got, want)
	}
}

// Timestamp writes what time.Format wrote with the layout, for any
// instant and zone, inside and outside the four-digit years.
func TestTimestampIsFormat(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	zones := []*time.Location{time.UTC, time.FixedZone("e", 5*3600+1800), time.FixedZone("w", -11*3600)}
	times := []time.Time{{}, time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-5, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 999_000, time.UTC)}
	for range 20000 {
		times = append(times, time.Unix(r.Int64N(1<<36)-1<<35, r.Int64N(1e9)).In(zones[r.IntN(len(zones))]))
	}
	for _, tm := range times {
		if got, want := Timestamp(tm), tm.UTC().Format(timestampLayout); got != want {
			t.Fatalf("Timestamp(%v) = %q, Format gives %q", tm, got, want)
		}
	}
}
