package skills

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchWords is the vocabulary of generated skills: developer words
// plus generated ones, so that term frequencies look like a real library
// (a few very common words, a long tail of rare ones).
func benchWords(r *rand.Rand) []string {
	base := strings.Fields(`review release deploy test debug refactor document security incident
		orchestrate plan migrate database cache queue api server client config schema index search
		performance latency memory profile build pipeline container kubernetes network auth token
		secret permission audit log metric trace alert rollback version dependency module package
		function interface error retry timeout concurrency lock race goroutine thread process file
		parser format json yaml markdown template generator benchmark coverage fuzz mock fixture`)
	syll := []string{"ka", "lo", "mi", "ne", "ru", "ta", "vo", "xi", "ze", "po", "qua", "der", "sil", "mon", "tar"}
	for len(base) < 3000 {
		w := ""
		for range 2 + r.IntN(3) {
			w += syll[r.IntN(len(syll))]
		}
		base = append(base, w)
	}
	return base
}

// zipf picks word i with probability about 1/(i+1).
func pick(r *rand.Rand, words []string) string {
	return words[int(float64(len(words))*r.Float64()*r.Float64()*r.Float64())]
}

func sentence(r *rand.Rand, words []string, n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = pick(r, words)
	}
	return strings.Join(out, " ")
}

// generateLibrary writes n skills in 20 categories, a fifth of them in
// subcategories.
func generateLibrary(tb testing.TB, n int) string {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, uint64(n)))
	words := benchWords(r)
	root := tb.TempDir()
	for i := range n {
		cat := fmt.Sprintf("category-%02d", i%20)
		name := fmt.Sprintf("%s-%s-%d", pick(r, words), pick(r, words), i)
		dir := filepath.Join(root, cat, name)
		if i%5 == 0 {
			dir = filepath.Join(root, cat, "group-"+pick(r, words), name)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "---\nname: %s\ndescription: %q\nversion: 1.%d.0\n", name, sentence(r, words, 18), i%7)
		fmt.Fprintf(&b, "tags: [%s, %s, %s]\naliases: [%s-%d]\n---\n\n# %s\n\n", pick(r, words), pick(r, words), pick(r, words), pick(r, words), i, name)
		for p := range 4 {
			fmt.Fprintf(&b, "%d. %s.\n", p+1, sentence(r, words, 40))
		}
		fmt.Fprintf(&b, "\n```bash\necho %s\n```\n", pick(r, words))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

// BenchmarkIndex1000 indexes 1,000 generated skills from disk: walk,
// read, frontmatter validation, lookups, graph and search index. Goal:
// under 300 ms.
func BenchmarkIndex1000(b *testing.B) {
	root := generateLibrary(b, 1000)
	src := Source{FS: os.DirFS(root), Dir: root, Label: "SKILLS"}
	b.ResetTimer()
	for b.Loop() {
		ix := Build(src)
		if ix.Len() != 1000 || len(ix.Diagnostics) != 0 {
			b.Fatalf("%d skills, %v", ix.Len(), ix.Diagnostics)
		}
		// The relevance index is built by the first search; it is part
		// of indexing here as it always was.
		ix.lex()
	}
}

var benchQueries = []string{
	"review", "deploy kubernetes", "how do I fix a race in the cache", "rollback release",
	"kalomi", "securty audit", "performance latency profile", "token secret permission",
	"database migrate schema", "what should I test", "orchestrate plan", "zzzz nothing",
}

// BenchmarkSearch10k searches 10,000 generated skills with a mix of
// one-word, multi-word, typo and no-match queries, and reports the p50
// and p99 latency of single searches. Goal: p99 at most 5 ms.
func BenchmarkSearch10k(b *testing.B) {
	root := generateLibrary(b, 10000)
	ix := Build(Source{FS: os.DirFS(root), Dir: root, Label: "SKILLS"})
	if ix.Len() != 10000 {
		b.Fatalf("%d skills", ix.Len())
	}
	// The relevance index alone: build time and the heap it holds.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	lx := buildLexicon(ix.Skills)
	b.ReportMetric(float64(time.Since(start).Milliseconds()), "lexicon-build-ms")
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(lx)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "lexicon-MB")
	ix.lex() // the index's own, built by its first search: not timed below
	var lat []time.Duration
	b.ResetTimer()
	i := 0
	for b.Loop() {
		q := benchQueries[i%len(benchQueries)]
		i++
		start := time.Now()
		ix.Search(q, 15)
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
