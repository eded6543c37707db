package search

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeEmbeddings is an OpenAI-compatible /v1/embeddings endpoint on
// loopback: a text's vector has a 1 for each word of fakeAxes it holds,
// so tests decide which texts are similar.
type fakeEmbeddings struct {
	mu     sync.Mutex
	inputs []string // every input asked for, in order
	fail   bool
}

var fakeAxes = []string{"alpha", "beta", "gamma", "delta"}

func (f *fakeEmbeddings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail || r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "fake-model" {
		http.Error(w, "no", http.StatusInternalServerError)
		return
	}
	f.mu.Lock()
	f.inputs = append(f.inputs, req.Input...)
	f.mu.Unlock()
	type datum struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var out struct {
		Data []datum `json:"data"`
	}
	for i, text := range req.Input {
		v := make([]float32, len(fakeAxes)+1)
		v[len(fakeAxes)] = 0.01
		for _, w := range strings.Fields(text) {
			if j := slices.Index(fakeAxes, w); j >= 0 {
				v[j] = 1
			}
		}
		out.Data = append(out.Data, datum{i, v})
	}
	json.NewEncoder(w).Encode(out)
}

func (f *fakeEmbeddings) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.inputs)
}

func TestSemanticRerankFusesRanks(t *testing.T) {
	fake := &fakeEmbeddings{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	dir := t.TempDir()
	sem := NewSemantic(srv.URL, "fake-model", dir)
	if got := sem.Status(); !strings.HasPrefix(got, "on (model fake-model") {
		t.Fatalf("status before use: %q", got)
	}
	// Lexical order A, B, C, D; the query means what B, C and D mean and
	// nothing of A: fused, B leads.
	docs := []SemanticDoc{{"alpha doc"}, {"beta doc"}, {"gamma doc"}, {"delta doc"}}
	order := sem.Rerank(context.Background(), "beta gamma delta question", docs)
	if order[0] != 1 {
		t.Fatalf("fused order %v: a close second lexically that means the query should lead", order)
	}
	if !slices.Contains(fake.asked(), "beta gamma delta question") || len(fake.asked()) != 5 {
		t.Fatalf("first call embeds the query and the four documents: %v", fake.asked())
	}
	// Vectors are cached per definition, on disk too: a new reranker over
	// the same directory asks only for the new query.
	sem2 := NewSemantic(srv.URL+"/v1/embeddings", "fake-model", dir)
	before := len(fake.asked())
	sem2.Rerank(context.Background(), "delta question", docs)
	if got := fake.asked()[before:]; !slices.Equal(got, []string{"delta question"}) {
		t.Fatalf("cached documents were embedded again: %v", got)
	}
	if st := sem2.Status(); !strings.Contains(st, "4 vectors cached") {
		t.Errorf("status %q", st)
	}
}

func TestSemanticFailureFallsBackVisibly(t *testing.T) {
	fake := &fakeEmbeddings{fail: true}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	sem := NewSemantic(srv.URL, "fake-model", t.TempDir())
	docs := []SemanticDoc{{"alpha"}, {"beta"}, {"gamma"}}
	if order := sem.Rerank(context.Background(), "gamma", docs); !slices.Equal(order, []int{0, 1, 2}) {
		t.Fatalf("a failing endpoint must leave the lexical order: %v", order)
	}
	if st := sem.Status(); !strings.HasPrefix(st, "lexical fallback: embeddings endpoint answered 500") {
		t.Fatalf("status %q", st)
	}
	// An endpoint that is gone.
	srv.Close()
	sem = NewSemantic(srv.URL, "fake-model", "")
	if order := sem.Rerank(context.Background(), "gamma", docs); !slices.Equal(order, []int{0, 1, 2}) {
		t.Fatalf("order %v", order)
	}
	if st := sem.Status(); !strings.HasPrefix(st, "lexical fallback: ") {
		t.Fatalf("status %q", st)
	}
	var off *Semantic
	if off.Status() != "off" || NewSemantic("", "m", "") != nil {
		t.Fatal("no endpoint configured means off")
	}
}

func TestSemanticIgnoresHostileCacheFiles(t *testing.T) {
	fake := &fakeEmbeddings{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	dir := t.TempDir()
	sem := NewSemantic(srv.URL, "fake-model", dir)
	docs := []SemanticDoc{{"alpha"}, {"gamma"}}
	// A planted file of the wrong shape is a miss, not a crash or a vector.
	key := sem.key("gamma")
	if err := os.MkdirAll(filepath.Join(dir, key[:2]), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sem.cachePath(key), []byte(`{"not":"a vector"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	sem.Rerank(context.Background(), "gamma question", docs)
	if !slices.Contains(fake.asked(), "gamma") {
		t.Fatalf("the malformed cache entry was used: %v", fake.asked())
	}
}

// The embedded vector table loads and knows common words, with vectors of
// unit length.
func TestVectorTableLoads(t *testing.T) {
	v := make([]float32, dims)
	if !wordVector("document", 1, v) || !unitLength(v) {
		t.Fatal("the table has no vector for 'document'")
	}
	if wordVector("zzqxnotaword", 1, make([]float32, dims)) {
		t.Fatal("the table has a vector for a non-word")
	}
	if tableN < 50000 {
		t.Fatalf("the table has %d words", tableN)
	}
}

// A request that shares no word with the tool it wants finds it through
// meaning, offline; with semantic similarity off it finds nothing.
// meaningDocs are five tools on unrelated subjects, for the semantic
// tests.
var meaningDocs = []Doc{
	{Fields: []string{"merge_pdf", "Merge several PDF files into one PDF.", ""}},
	{Fields: []string{"take_screenshot", "Capture the browser page as a PNG image.", ""}},
	{Fields: []string{"send_email", "Send an email message to a recipient.", ""}},
	{Fields: []string{"list_pods", "List the pods of a Kubernetes namespace.", ""}},
	{Fields: []string{"play_song", "Play a song from the music library.", ""}},
}

func TestSemanticFindsAParaphraseWithNoSharedWord(t *testing.T) {
	docs := meaningDocs
	query := "write a letter to my landlord"
	on := Build(Options{Fields: testFields, MinConfidence: 0.4, MinEvidence: 0.5, Semantic: 0.5, SemanticJoin: 0.6, SemanticFloor: 0.6}, docs)
	r := on.Search(query, 3, nil)
	if len(r.Hits) == 0 || r.Hits[0].Doc != 2 || r.Hits[0].Lexical != 0 || r.Hits[0].Semantic <= 0 {
		t.Fatalf("semantic on: %+v", r)
	}
	off := Build(Options{Fields: testFields, MinConfidence: 0.4, MinEvidence: 0.5}, docs)
	if r := off.Search(query, 3, nil); len(r.Hits) != 0 {
		t.Fatalf("semantic off found %v", hitDocs(r))
	}
}

// A query word no document has meets the document words closest to it in
// meaning (album → song, music) and adds to the match, with the reason
// saying so; with soft matching off it adds nothing. Searches run concurrently: the neighbours each
// word finds are cached on the index.
func TestSoftMatchMeetsAWordCloseInMeaning(t *testing.T) {
	docs := meaningDocs
	opts := Options{Fields: testFields, MinConfidence: 0.4, MinEvidence: 0.5, Semantic: 0.5, SemanticJoin: 0.6, SemanticFloor: 0.6, SoftMatch: 0.6}
	on := Build(opts, docs)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := on.Search("play an album", 3, nil)
			if len(r.Hits) == 0 || r.Hits[0].Doc != 4 || r.Hits[0].Lexical == 0 {
				t.Errorf("soft matching on: %+v", r)
				return
			}
			meant := slices.ContainsFunc(r.Hits[0].Reasons, func(re Reason) bool {
				return re.Word == "album" && re.Via == ViaMeaning && (re.Term == "song" || re.Term == "music")
			})
			if !meant {
				t.Errorf("reasons %+v: want album met by meaning", r.Hits[0].Reasons)
			}
		}()
	}
	wg.Wait()
	opts.SoftMatch = 0
	off := Build(opts, docs)
	for _, h := range off.Search("play an album", 3, nil).Hits {
		if slices.ContainsFunc(h.Reasons, func(re Reason) bool { return re.Via == ViaMeaning }) {
			t.Fatalf("soft matching off met a word by meaning: %+v", h)
		}
	}
}
