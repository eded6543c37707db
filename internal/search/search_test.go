package search

import (
	"slices"
	"strings"
	"testing"
)

var testFields = []Field{
	{Name: "name", Weight: 3, B: 0.3},
	{Name: "description", Weight: 1, B: 0.75},
	{Name: "body", Weight: 0.5, B: 0.75, Weak: true},
}

func testIndex(docs ...[3]string) *Index {
	ds := make([]Doc, len(docs))
	for i, d := range docs {
		ds[i] = Doc{Fields: d[:]}
	}
	return Build(Options{Fields: testFields, MinConfidence: 0.4, MinEvidence: 0.5}, ds)
}

func hitDocs(r Result) []int {
	var out []int
	for _, h := range r.Hits {
		out = append(out, h.Doc)
	}
	return out
}

func TestStemIsSnowball(t *testing.T) {
	for in, want := range map[string]string{
		"reviews": "review", "reviewing": "review", "reviewed": "review",
		"deployment": "deploy", "deploying": "deploy", "created": "creat", "creating": "creat",
		"dependencies": "depend", "processes": "process", "k8s": "k8s", "e2e": "e2e", "ci": "ci",
	} {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWordsSplitsIdentifiers(t *testing.T) {
	got := Words("getFileInfo fs_read-text GitLab")
	want := []string{"get", "file", "info", "getfileinfo", "fs", "read", "text", "git", "lab", "gitlab"}
	if !slices.Equal(got, want) {
		t.Fatalf("Words = %v, want %v", got, want)
	}
}

func TestEditDistanceAndLimits(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{
		{"deploy", "deploy", 0}, {"deploy", "deplo", 1}, {"deploy", "dpeloy", 1}, {"deploy", "deplyo", 1},
		{"navigate", "naviagte", 1}, {"deploy", "edplyo", 2}, {"kitten", "sitting", 3},
	} {
		if got := editDistance(c.a, c.b, 3); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
	if got := editDistance("deploy", "zzzzzz", 1); got != 2 {
		t.Errorf("a bounded distance stops at limit+1: %d", got)
	}
	for n, want := range map[int]int{3: 0, 4: 1, 7: 1, 8: 2, 12: 2} {
		if got := typoLimit(n); got != want {
			t.Errorf("typoLimit(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestTypoMeetsTheWordNotALongerOne(t *testing.T) {
	ix := testIndex(
		[3]string{"navigate", "Go to a page in the browser.", ""},
		[3]string{"navigation-menu", "A menu.", "the navigational aids"},
		[3]string{"list", "List a directory.", ""},
	)
	r := ix.Search("naviagte", 3, nil)
	if len(r.Hits) == 0 || r.Hits[0].Doc != 0 || r.Hits[0].Reasons[0].Via != ViaTypo {
		t.Fatalf("naviagte: %+v", r)
	}
	// Four letters: only a swap of neighbours.
	if r := ix.Search("lsit", 3, nil); len(r.Hits) == 0 || r.Hits[0].Doc != 2 {
		t.Fatalf("lsit: %+v", r)
	}
	if r := ix.Search("lost", 3, nil); len(r.Hits) != 0 {
		t.Fatalf("a four-letter word one substitution away is not a typo: %+v", r)
	}
}

func TestPrefixNeedsAStemRelation(t *testing.T) {
	ix := testIndex(
		[3]string{"output-reader", "Read the output of a process.", ""},
		[3]string{"outbox", "Messages waiting out there.", ""},
		[3]string{"testparseduration", "Unrelated helper.", ""},
		[3]string{"tester", "Runs the test suite.", ""},
		[3]string{"kubernetes", "Cluster tool.", ""},
	)
	for _, h := range ix.Search("out", 5, nil).Hits {
		if h.Doc == 0 {
			t.Errorf("out met output: %+v", h)
		}
	}
	for _, h := range ix.Search("test", 5, nil).Hits {
		if h.Doc == 2 {
			t.Errorf("test met testparseduration: %+v", h)
		}
	}
	// A word no document has may be cut short.
	if r := ix.Search("kubern", 5, nil); len(r.Hits) != 1 || r.Hits[0].Doc != 4 || r.Hits[0].Reasons[0].Via != ViaPrefix {
		t.Errorf("kubern: %+v", r)
	}
}

func TestBodyOnlyAndCommonWordsWeighLittle(t *testing.T) {
	docs := [][3]string{
		{"bisect", "Find the commit that broke the build.", "run git bisect"},
		{"notes", "Unrelated.", "mentions bisect once among many other words about nothing in particular"},
	}
	for i := range 12 {
		docs = append(docs, [3]string{"filler", "Run the thing and read the output.", strings.Repeat("run ", i+1)})
	}
	ix := testIndex(docs...)
	r := ix.Search("bisect", 5, nil)
	if got := hitDocs(r); len(got) < 2 || got[0] != 0 || r.Hits[1].Score > r.Hits[0].Score*0.5 {
		t.Fatalf("body-only match should weigh little: %+v", r.Hits)
	}
	// "run" is in every document: with another word it adds nothing on its
	// own, so the documents that have only "run" are no match.
	for _, h := range ix.Search("run bisect", 20, nil).Hits {
		if h.Doc >= 2 {
			t.Fatalf("a document matched on the common word alone: %+v", h)
		}
	}
}

func TestExpansion(t *testing.T) {
	ix := testIndex(
		[3]string{"kube-deploy", "Roll out to kubernetes.", ""},
		[3]string{"elevation", "Elevation of points on the earth.", ""},
		[3]string{"relation-create", "Create a relation between entities.", ""},
		[3]string{"git-status", "Show the working tree changes.", ""},
	)
	for _, c := range []struct {
		q   string
		doc int
		via Via
	}{
		{"k8s", 0, ViaJargon},           // evokore.cue jargon
		{"height", 1, ViaLexicon},       // WordNet synonym
		{"relationship", 2, ViaLexicon}, // WordNet derivation
		{"modified", 3, ViaLexicon},     // modify ↔ change
	} {
		r := ix.Search(c.q, 3, nil)
		if len(r.Hits) == 0 || r.Hits[0].Doc != c.doc || r.Hits[0].Reasons[0].Via != c.via || !r.Hits[0].Expanded {
			t.Errorf("%q: %+v (why %q)", c.q, r.Hits, r.Why)
		}
	}
}

func TestAbstainsAndSaysWhy(t *testing.T) {
	ix := testIndex(
		[3]string{"pr-review", "Review a pull request.", ""},
		[3]string{"release", "Tag and publish a release.", ""},
		[3]string{"deploy", "Deploy a service.", ""},
	)
	r := ix.Search("zzqx florp", 5, nil)
	if len(r.Hits) != 0 || !r.Abstained || r.Why != "no indexed word matches 'zzqx', 'florp'" {
		t.Fatalf("unknown words: %+v", r)
	}
	r = ix.Search("bake sourdough bread for the release party", 5, nil)
	if len(r.Hits) != 0 || !r.Abstained || !strings.Contains(r.Why, "floor") {
		t.Fatalf("a query mostly of words nothing knows: %+v", r)
	}
	if r := ix.Search("review the pull request", 5, nil); len(r.Hits) == 0 || r.Hits[0].Doc != 0 || r.Abstained {
		t.Fatalf("answerable: %+v", r)
	}
}

func TestTieRuleAndAdjust(t *testing.T) {
	docs := []Doc{{Fields: []string{"alpha", "Same words here.", ""}}, {Fields: []string{"beta", "Same words here.", ""}}}
	ix := Build(Options{Fields: testFields, Tie: func(a, b int) int { return b - a }}, docs)
	if got := hitDocs(ix.Search("same words", 2, nil)); !slices.Equal(got, []int{1, 0}) {
		t.Fatalf("tie rule: %v", got)
	}
	ix = Build(Options{Fields: testFields, Adjust: func(d int, q *Query, m Matched) float64 {
		if d == 0 && !q.Has("alpha") {
			return 0.5
		}
		return 1
	}}, docs)
	if got := hitDocs(ix.Search("same words", 2, nil)); !slices.Equal(got, []int{1, 0}) {
		t.Fatalf("adjust: %v", got)
	}
}

// Relevance is the one rendering of a relevance match's signals that
// discover_tools and search_skills share.
func TestRelevanceRendersTheSignals(t *testing.T) {
	if got, want := Relevance("relevance", 1, 0.214, 1.107, false), "tier relevance: lexical 1.00, meaning 0.21, score 1.11"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := Relevance("relevance", 0, 0.7, 0.35, true); !strings.HasSuffix(got, "; no query word matched: joined on meaning alone") {
		t.Errorf("alone: %q", got)
	}
}
