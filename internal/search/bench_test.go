package search

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchVocabulary is the words of generated documents: developer words
// the vector table, WordNet and the jargon list know, then generated ones,
// so that term frequencies look like a real tool list (a few very common
// words, a long tail of rare ones).
func benchVocabulary(r *rand.Rand) []string {
	words := strings.Fields(`file read write list create delete update search query issue pull request
		review release deploy test debug database table schema index cache queue server client config
		browser page navigate click screenshot email message send channel calendar event meeting note
		document folder directory repository branch commit merge kubernetes pod container image build
		pipeline log metric trace alert secret token permission user account payment invoice customer
		song music playlist weather forecast map location translate text image video upload download`)
	syll := []string{"ka", "lo", "mi", "ne", "ru", "ta", "vo", "xi", "ze", "po", "qua", "der", "sil", "mon", "tar"}
	for len(words) < 2000 {
		w := ""
		for range 2 + r.IntN(3) {
			w += syll[r.IntN(len(syll))]
		}
		words = append(words, w)
	}
	return words
}

// benchDocs generates n documents of a name, a description and a weak
// body, deterministically.
func benchDocs(n int) []Doc {
	r := rand.New(rand.NewPCG(7, uint64(n)))
	words := benchVocabulary(r)
	pick := func() string { return words[int(float64(len(words))*r.Float64()*r.Float64()*r.Float64())] }
	text := func(k int) string {
		out := make([]string, k)
		for i := range out {
			out[i] = pick()
		}
		return strings.Join(out, " ")
	}
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = Doc{Fields: []string{fmt.Sprintf("%s_%s_%d", pick(), pick(), i), text(14), text(30)}}
	}
	return docs
}

// benchQueries mix one word, several, a typo, jargon, a paraphrase no
// document words, a number and a query nothing answers.
var benchQueries = []string{
	"read file", "create a pull request for my branch", "naviagte to the page", "k8s pod logs",
	"send an email to the customer about the invoice", "write a letter to my landlord",
	"what is the weather forecast", "delete 42", "zzqx florp", "kalomi", "search issues",
	"upload the screenshot to the channel",
}

// benchmarkSearchQuery times SearchQuery alone over analysed queries, the
// way callers that reuse an analysis would; Analyze is timed apart.
func benchmarkSearchQuery(b *testing.B, n int, semantic bool) {
	opts := Options{Fields: testFields, MinConfidence: 0.3, MinEvidence: 0.8}
	if semantic {
		opts.Semantic, opts.SemanticFloor, opts.SemanticJoin, opts.SoftMatch = 0.5, 0.8, 0.6, 0.6
	}
	ix := Build(opts, benchDocs(n))
	qs := make([]*Query, len(benchQueries))
	for i, text := range benchQueries {
		qs[i] = ix.Analyze(text)
	}
	i := 0
	for b.Loop() {
		ix.SearchQuery(qs[i%len(qs)], 10, nil)
		i++
	}
}

// BenchmarkSearchQuery ranks analysed queries over generated documents,
// lexically and with semantic fusion and soft matching on.
func BenchmarkSearchQuery(b *testing.B) {
	b.Run("lexical-1k", func(b *testing.B) { benchmarkSearchQuery(b, 1000, false) })
	b.Run("semantic-1k", func(b *testing.B) { benchmarkSearchQuery(b, 1000, true) })
	b.Run("semantic-10k", func(b *testing.B) { benchmarkSearchQuery(b, 10000, true) })
}

// BenchmarkAnalyze turns queries into concepts over 10,000 generated
// documents: exact, prefix, jargon, typo, WordNet and soft-match
// alternatives.
func BenchmarkAnalyze(b *testing.B) {
	ix := Build(Options{Fields: testFields, Semantic: 0.5, SoftMatch: 0.6}, benchDocs(10000))
	i := 0
	for b.Loop() {
		ix.Analyze(benchQueries[i%len(benchQueries)])
		i++
	}
}
