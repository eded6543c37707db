package catalog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/search/searcheval"
)

// The retrieval benchmark: the real tool lists of MCP servers from npm
// plus evokore's natives (testdata/retrieval/corpus.json, natives.json)
// and natural-language queries with graded labels (queries.json), written
// without looking at the ranker. See testdata/retrieval/README.md.

type retrievalQuery = searcheval.Query

func loadRetrieval(t testing.TB) (*Snapshot, []retrievalQuery) {
	t.Helper()
	dir := filepath.Join("testdata", "retrieval")
	var corpus struct {
		Servers []struct {
			ID    string      `json:"id"`
			Tools []*mcp.Tool `json:"tools"`
		} `json:"servers"`
	}
	var natives struct {
		Tools []*mcp.Tool `json:"tools"`
	}
	var queries []retrievalQuery
	for name, v := range map[string]any{"corpus.json": &corpus, "natives.json": &natives, "queries.json": &queries} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var nat []*Entry
	for _, tool := range natives.Tools {
		nat = append(nat, NewEntry(tool, SourceNative))
	}
	var ids []string
	for _, s := range corpus.Servers {
		ids = append(ids, s.ID)
	}
	store := NewStore(nat, ids)
	for _, s := range corpus.Servers {
		store.SetServerTools(s.ID, s.Tools)
	}
	return store.Snapshot(), queries
}

// retrievalScores are the usual IR metrics over the query set. Recall@k is
// the share of a query's right tools (grade 2) found in the top k,
// averaged over queries; MRR uses the first right tool; nDCG@10 uses gain
// 2^grade-1, so acceptable tools (grade 1) count too.
type retrievalScores struct {
	searcheval.Scores
	ExactTop1, HardNegHit5 float64
	NExact, NHard          int
}

// evaluate scores the ranker with the shared metrics, plus the two this
// set adds: top-1 of exact-name queries and recall@5 of hard negatives.
func evaluate(snap *Snapshot, queries []retrievalQuery) retrievalScores {
	rank := toolRanker(snap)
	hard := searcheval.ByKind(queries, rank)["hard-negative"]
	s := retrievalScores{Scores: searcheval.Evaluate(queries, rank), HardNegHit5: hard.Recall5, NHard: hard.N}
	for _, q := range queries {
		if q.Kind != "exact-name" {
			continue
		}
		s.NExact++
		if names := rank(q.Query); len(names) > 0 && q.Labels[names[0]] == 2 {
			s.ExactTop1++
		}
	}
	if s.NExact > 0 {
		s.ExactTop1 /= float64(s.NExact)
	}
	return s
}

// Thresholds committed from measurement; the run that set them is in the
// closing note of the discovery issue. They sit a little under what the
// ranker scores so that noise-free refactors pass and regressions fail.
// Recall@1 measured 0.625 when run_code joined the natives (one more
// document moves every term's weight, and one query's top hit with it);
// soft matching brought it to 0.639, and the floor back to 0.63.
var retrievalFloor = retrievalScores{
	Scores:    searcheval.Scores{Recall1: 0.63, Recall5: 0.84, Recall10: 0.90, MRR: 0.74, NDCG10: 0.765},
	ExactTop1: 1.0,
}

func TestRetrievalQuality(t *testing.T) {
	snap, queries := loadRetrieval(t)
	if len(snap.Entries) < 300 || len(queries) < 120 {
		t.Fatalf("corpus has %d tools and %d queries; the benchmark needs at least 300 and 120", len(snap.Entries), len(queries))
	}
	s := evaluate(snap, queries)
	t.Logf("tools %d queries %d: R@1 %.3f R@5 %.3f R@10 %.3f MRR %.3f nDCG@10 %.3f exact-top1 %.3f (%d) hard-neg R@5 %.3f (%d)",
		len(snap.Entries), s.N, s.Recall1, s.Recall5, s.Recall10, s.MRR, s.NDCG10, s.ExactTop1, s.NExact, s.HardNegHit5, s.NHard)
	if testing.Verbose() {
		t.Logf("misses at 5:\n%s", strings.Join(s.Misses, "\n"))
	}
	f := retrievalFloor
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"Recall@1", s.Recall1, f.Recall1}, {"Recall@5", s.Recall5, f.Recall5}, {"Recall@10", s.Recall10, f.Recall10},
		{"MRR", s.MRR, f.MRR}, {"nDCG@10", s.NDCG10, f.NDCG10}, {"exact-name top-1", s.ExactTop1, f.ExactTop1},
	} {
		if c.got < c.want {
			t.Errorf("%s = %.3f, below the committed floor %.3f", c.name, c.got, c.want)
		}
	}
}

// BenchmarkRetrieval prints the quality table (make bench).
func BenchmarkRetrieval(b *testing.B) {
	snap, queries := loadRetrieval(b)
	var s retrievalScores
	for b.Loop() {
		s = evaluate(snap, queries)
	}
	b.ReportMetric(s.Recall1, "R@1")
	b.ReportMetric(s.Recall5, "R@5")
	b.ReportMetric(s.Recall10, "R@10")
	b.ReportMetric(s.MRR, "MRR")
	b.ReportMetric(s.NDCG10, "nDCG@10")
	b.ReportMetric(s.ExactTop1, "exact-top1")
}

// scaled repeats the corpus under new server ids until it holds n tools.
func scaled(b *testing.B, n int) (*Snapshot, []retrievalQuery) {
	snap, queries := loadRetrieval(b)
	var proxies []*Entry
	for _, e := range snap.Entries {
		if e.Source == SourceProxy {
			proxies = append(proxies, e)
		}
	}
	store := NewStore(nil, nil)
	count := 0
	for copyN := 0; count < n; copyN++ {
		byServer := map[string][]*mcp.Tool{}
		var order []string
		for _, e := range proxies {
			id := fmt.Sprintf("%s%d", e.Server, copyN)
			if _, ok := byServer[id]; !ok {
				order = append(order, id)
			}
			t := *e.Tool
			t.Name = e.Original
			byServer[id] = append(byServer[id], &t)
		}
		for _, id := range order {
			if count >= n {
				break
			}
			tools := byServer[id]
			if count+len(tools) > n {
				tools = tools[:n-count]
			}
			store.SetServerTools(id, tools)
			count += len(tools)
		}
	}
	return store.Snapshot(), queries
}

func benchmarkDiscover(b *testing.B, n int) {
	snap, queries := scaled(b, n)
	snap.Search("warm up the index", 8)
	// One OS thread runs every search, so its CPU clock times them.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var lat, cpu []time.Duration
	i := 0
	for b.Loop() {
		q := queries[i%len(queries)].Query
		i++
		start, startCPU := time.Now(), threadCPU()
		snap.Search(q, 8)
		lat = append(lat, time.Since(start))
		cpu = append(cpu, threadCPU()-startCPU)
	}
	slices.Sort(lat)
	slices.Sort(cpu)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	if cpu[len(cpu)-1] > 0 {
		b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds()), "p50-cpu-µs")
		b.ReportMetric(float64(cpu[len(cpu)*99/100].Microseconds()), "p99-cpu-µs")
	}
}

// BenchmarkDiscover1k and BenchmarkDiscover10k time one discover_tools
// search over 1,000 and 10,000 tools (the index is built once per
// snapshot, before the timing): p50 and p99 of wall-clock time and, on
// Linux, of the CPU time the search used, which a shared machine's load
// does not inflate.
func BenchmarkDiscover1k(b *testing.B)  { benchmarkDiscover(b, 1000) }
func BenchmarkDiscover10k(b *testing.B) { benchmarkDiscover(b, 10000) }

// BenchmarkDiscover10kCPU is the cost of each query of the tuning set
// over 10,000 tools without a loaded machine's noise: the least CPU time
// of seven runs of the query, as p50, p99 and max over the queries. On a
// shared machine the wall-clock p99 of BenchmarkDiscover10k measures
// the load; this measures the search. Linux only.
func BenchmarkDiscover10kCPU(b *testing.B) {
	snap, queries := scaled(b, 10000)
	snap.Search("warm up the index", 8)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if threadCPU() == 0 {
		b.Skip("no thread CPU clock here")
	}
	cost := make([]time.Duration, len(queries))
	for b.Loop() {
		for i, q := range queries {
			cost[i] = time.Hour
			for range 7 {
				start := threadCPU()
				snap.Search(q.Query, 8)
				cost[i] = min(cost[i], threadCPU()-start)
			}
		}
	}
	slices.Sort(cost)
	b.ReportMetric(float64(cost[len(cost)/2].Microseconds()), "p50-cpu-µs")
	b.ReportMetric(float64(cost[len(cost)*99/100].Microseconds()), "p99-cpu-µs")
	b.ReportMetric(float64(cost[len(cost)-1].Microseconds()), "max-cpu-µs")
}

// BenchmarkIndexBuild10k times building the search index of 10,000 tools
// and reports the heap one index holds (index-MB).
func BenchmarkIndexBuild10k(b *testing.B) {
	snap, _ := scaled(b, 10000)
	var keep *index
	for b.Loop() {
		keep = buildIndex(snap.Entries)
	}
	b.ReportMetric(heapHeldMB(func() any { return buildIndex(snap.Entries) }), "index-MB")
	_ = keep
}

// heapHeldMB is the heap, in MB, that what build returns keeps alive.
func heapHeldMB(build func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
}

// toolRanker is discover_tools' ranking as names.
func toolRanker(snap *Snapshot) func(string) []string {
	return func(q string) []string {
		var out []string
		for _, m := range snap.Search(q, 10) {
			out = append(out, m.Entry.Name)
		}
		return out
	}
}

// extraFloors are committed from measurement for queries_extra.json, a
// little under what the ranker scores, and only ever go up.
var extraFloors = []searcheval.Floor{
	{Kind: "all", Measure: "R@5", Min: 0.83}, {Kind: "all", Measure: "MRR", Min: 0.72},
	{Kind: "all", Measure: "nDCG@10", Min: 0.75},
	{Kind: "paraphrase", Measure: "R@5", Min: 0.78}, {Kind: "typo", Measure: "R@5", Min: 0.89},
	{Kind: "abbreviation", Measure: "R@5", Min: 0.92}, {Kind: "no-answer", Measure: "abstention", Min: 0.45},
}

// TestRetrievalExtra scores the second query set: paraphrases that name
// a concept by another word than the tool does, typos, abbreviations and
// questions no tool in the corpus answers (abstention).
func TestRetrievalExtra(t *testing.T) {
	snap, _ := loadRetrieval(t)
	searcheval.Report(t, fmt.Sprintf("tools %d, extra", len(snap.Entries)), loadQueryFile(t, snap, "queries_extra.json"), toolRanker(snap), extraFloors)
}

// A question no tool of the corpus answers gets no tools and the reason,
// for each floor that can stop it: no word indexed, too little of the
// query covered, too few distinctive words. A question a tool answers
// still gets it first.
func TestFindAbstainsWhenNothingSpecificMatches(t *testing.T) {
	snap, _ := loadRetrieval(t)
	for query, why := range map[string]string{
		"transcode this video to h264":             "no indexed word matches",
		"play my favourite playlist on spotify":    "under the 30% floor",
		"book a flight to Lisbon for next Tuesday": "too few distinctive words",
		"convert celsius to fahrenheit":            "too few distinctive words",
	} {
		f := snap.Find(query, 10)
		if len(f.Matches) != 0 || !strings.Contains(f.Why, why) {
			names := make([]string, len(f.Matches))
			for i, m := range f.Matches {
				names[i] = m.Entry.Name
			}
			t.Errorf("%q: %v, why %q; want no tools because %q", query, names, f.Why, why)
		}
	}
	if f := snap.Find("read a file", 10); len(f.Matches) == 0 || f.Matches[0].Entry.Name != "fs_read_file" || f.Why != "" {
		t.Errorf("read a file: %+v", f)
	}
}

// heldOutFloors are committed for queries_heldout.json, the set written
// blind and never tuned on (testdata/retrieval/README.md): it decides
// whether a ranking change generalises.
// The no-answer floor is what was measured once run_code joined the
// natives (2 of 7; 3 of 7 before: one more native shifts the term weights).
var heldOutFloors = []searcheval.Floor{
	{Kind: "all", Measure: "R@5", Min: 0.59}, {Kind: "all", Measure: "MRR", Min: 0.48},
	{Kind: "all", Measure: "answered", Min: 1}, {Kind: "no-answer", Measure: "abstention", Min: 0.28},
	{Kind: "typo", Measure: "R@5", Min: 0.99},
}

// TestRetrievalHeldOut scores the held-out set: paraphrases written from
// descriptions read once, with other words than the tools use, typos and
// no-answer questions. Nothing is tuned on it.
func TestRetrievalHeldOut(t *testing.T) {
	snap, _ := loadRetrieval(t)
	searcheval.Report(t, fmt.Sprintf("tools %d, held-out", len(snap.Entries)), loadQueryFile(t, snap, "queries_heldout.json"), toolRanker(snap), heldOutFloors)
}

// loadQueryFile reads a query set and checks that every label names a
// tool of the corpus.
func loadQueryFile(t testing.TB, snap *Snapshot, name string) []searcheval.Query {
	t.Helper()
	byName := map[string]bool{}
	for _, e := range snap.Entries {
		byName[e.Name] = true
	}
	qs, err := searcheval.Load(filepath.Join("testdata", "retrieval", name), func(label string) bool { return byName[label] })
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// A query word no tool uses meets a tool's word close in meaning, and the
// match's reasons say so: "earlier" meets desktop_get_recent_tool_calls'
// "recent", which no synonym table relates it to.
func TestReasonsSayWhatWasCloseInMeaning(t *testing.T) {
	snap, _ := loadRetrieval(t)
	for _, m := range snap.Search("what did the earlier tool calls do", 5) {
		if m.Entry.Name != "desktop_get_recent_tool_calls" {
			continue
		}
		if !slices.ContainsFunc(m.Reasons, func(r string) bool { return strings.Contains(r, "(close in meaning: earlier → recent)") }) {
			t.Fatalf("reasons %q: want earlier → recent", m.Reasons)
		}
		return
	}
	t.Fatal("desktop_get_recent_tool_calls is not in the top 5")
}

// A name's abbreviation is a guess: on a short query it ranks below the
// tools whose name or server holds the query word (or its jargon: pr →
// pull, rm → delete), and only leads when no word matched ("gcpr").
func TestAbbreviationRanksBelowWordMatches(t *testing.T) {
	snap, _ := loadRetrieval(t)
	for query, want := range map[string]string{
		"pr":   "_pull_request",
		"db":   "mongodb_",
		"rm":   "_delete_",
		"fs":   "fs_",
		"gcpr": "github_create_pull_request",
	} {
		var names []string
		for _, m := range snap.Search(query, 3) {
			names = append(names, m.Entry.Name)
		}
		if len(names) == 0 || !strings.Contains(names[0], want) {
			t.Errorf("%q: ranked %v, want a tool with %q in its name first", query, names, want)
		}
	}
}
