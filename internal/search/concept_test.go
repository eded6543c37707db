package search

import (
	"fmt"
	"slices"
	"testing"
)

// The steps of Index.concept, each on its own (index.go). What each
// way of matching finds end to end is in search_test.go.

func termsOf(ix *Index, ids []int32) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = ix.terms[id]
	}
	return out
}

// derived reaches, from a word the documents have, only its derived
// forms; from a word they do not have, any longer term; from a stem under
// four letters, nothing; and the most common when there are too many.
func TestDerivedFollowsDerivationalEndings(t *testing.T) {
	ix := testIndex(
		[3]string{"test", "", ""},
		[3]string{"tester", "", ""},
		[3]string{"testparseduration", "", ""},
		[3]string{"kubernetes", "", ""},
	)
	for _, c := range []struct {
		stem    string
		isExact bool
		want    []string
	}{
		{"test", true, []string{"tester"}},
		{"test", false, []string{"tester", "testparsedur"}},
		{"kubern", false, []string{"kubernet"}},
		{"tes", false, nil},
	} {
		if got := termsOf(ix, ix.derived(c.stem, c.isExact)); !slices.Equal(got, c.want) {
			t.Errorf("derived(%q, %v) = %v, want %v", c.stem, c.isExact, got, c.want)
		}
	}
	// Twenty terms under one stem, term i in i+1 documents: the sixteen
	// most common are kept, most common first.
	var docs [][3]string
	const endings = "abcdfghjkmnopqrtuvwz" // none the stemmer takes off
	for i := range 20 {
		for range i + 1 {
			docs = append(docs, [3]string{fmt.Sprintf("widget%c", endings[i]), "", ""})
		}
	}
	ix = testIndex(docs...)
	got := termsOf(ix, ix.derived("widg", false))
	if len(got) != maxPrefixAlts || got[0] != "widgetz" || got[maxPrefixAlts-1] != "widgetf" {
		t.Errorf("too many derived terms: %v", got)
	}
}

// expansions gives the indexed terms of the word's jargon, a plural's
// too, never the word's own stem, and nothing the documents lack.
func TestExpansionsFollowTheJargonTable(t *testing.T) {
	ix := testIndex(
		[3]string{"kubernetes", "Run kubectl.", ""},
		[3]string{"pull-request", "", ""},
		[3]string{"merge", "", ""},
		[3]string{"flaki", "Find a flaky test.", ""},
	)
	for _, c := range []struct {
		word string
		want []string
	}{
		{"k8s", []string{"kubernet", "kubectl"}},
		{"prs", []string{"pull", "request"}},
		{"flaky", []string{"test"}},
		{"mrs", []string{"merg", "request"}}, // only its singular is a key
		{"ts", nil},                          // typescript: in no document
	} {
		// A word, its stem and its singular may all be keys: a term comes
		// once per key, and concept keeps the first.
		got := termsOf(ix, ix.expansions(c.word, Stem(c.word)))
		var distinct []string
		for _, g := range got {
			if !slices.Contains(distinct, g) {
				distinct = append(distinct, g)
			}
		}
		if !slices.Equal(distinct, c.want) {
			t.Errorf("expansions(%q) = %v, want %v", c.word, got, c.want)
		}
	}
}

// weighConcept weighs a word by its own idf, else what it was corrected
// to or cut from, else (less) its jargon; a word nothing knows at a fixed
// share, an unused abbreviation less, a number not at all; and meaning or
// WordNet alone do not make a word known.
func TestWeighConceptSaysHowSpecificAWordIs(t *testing.T) {
	ix := stepIndex(t, Options{})
	dir, run, folder := term(t, ix, "directori"), term(t, ix, "run"), term(t, ix, "folder")
	idf := func(id int32) float64 { return float64(ix.idf[id]) }
	for _, c := range []struct {
		name       string
		c          concept
		exact      bool
		cover      float64
		known, qua bool
	}{
		{"exact", concept{word: "run", alts: []alt{{term: run, via: ViaExact}, {term: dir, via: ViaPrefix}}}, true, idf(run), true, false},
		{"derived or corrected", concept{word: "x", alts: []alt{{term: run, via: ViaTypo}, {term: dir, via: ViaPrefix}}}, false, idf(dir), true, false},
		{"jargon, capped", concept{word: "dir", alts: []alt{{term: dir, via: ViaJargon}}}, false, min(idf(dir), unknownCover*ix.maxIDF), true, false},
		{"jargon, common", concept{word: "x", alts: []alt{{term: run, via: ViaJargon}}}, false, idf(run), true, false},
		{"unknown", concept{word: "denver", alts: []alt{{term: folder, via: ViaMeaning}, {term: dir, via: ViaLexicon}}}, false, unknownCover * ix.maxIDF, false, false},
		{"unused abbreviation", concept{word: "ts", stem: "ts"}, false, jargonCover * ix.maxIDF, false, true},
		{"number", concept{word: "42", stem: "42"}, false, 0, false, false},
	} {
		got := c.c
		exact := int32(-1)
		if c.exact {
			exact = got.alts[0].term
		}
		ix.weighConcept(&got, exact, c.exact)
		if got.cover != c.cover || got.known != c.known || got.qualifier != c.qua {
			t.Errorf("%s: cover %v known %v qualifier %v; want %v %v %v", c.name, got.cover, got.known, got.qualifier, c.cover, c.known, c.qua)
		}
	}
}

// concept puts the word's own stem first and a term reached two ways
// once, the first way; it corrects typos only for a word neither the
// documents nor the jargon know; and a word the documents have reaches
// terms close in meaning more weakly than one they do not.
func TestConceptOrdersAndGatesAlternatives(t *testing.T) {
	ix := testIndex(
		[3]string{"directory", "List a directory.", ""},
		[3]string{"directories", "", ""},
		[3]string{"folder", "", ""},
		[3]string{"terms", "", ""},
		[3]string{"permission", "", ""},
	)
	c := ix.concept("directory", Stem("directory"))
	if len(c.alts) == 0 || c.alts[0].via != ViaExact || ix.terms[c.alts[0].term] != "directori" {
		t.Fatalf("exact first: %+v", c.alts)
	}
	seen := map[int32]bool{}
	for _, a := range c.alts {
		if seen[a.term] {
			t.Errorf("term %q reached twice: %+v", ix.terms[a.term], c.alts)
		}
		seen[a.term] = true
	}
	c.add(alt{term: c.alts[0].term, weight: 0.1, via: ViaTypo})
	if c.alts[0].via != ViaExact || slices.ContainsFunc(c.alts[1:], func(a alt) bool { return a.term == c.alts[0].term }) {
		t.Errorf("add replaced or repeated a term: %+v", c.alts)
	}
	// "perms" is jargon for permission: not corrected to "terms".
	if c := ix.concept("perms", Stem("perms")); slices.ContainsFunc(c.alts, func(a alt) bool { return a.via == ViaTypo }) {
		t.Errorf("perms was corrected: %+v", c.alts)
	}
	if c := ix.concept("lsit", Stem("lsit")); !slices.ContainsFunc(c.alts, func(a alt) bool { return a.via == ViaTypo }) {
		t.Errorf("lsit was not corrected: %+v", c.alts)
	}
	soft := Build(Options{Fields: testFields, Semantic: 0.5, SoftMatch: 0.6}, meaningDocs)
	for _, w := range []string{"song", "album"} {
		scale := viaWeight[ViaMeaning]
		if _, ok := soft.ids[Stem(w)]; ok {
			scale *= indexedMeaning
		}
		c := soft.concept(w, Stem(w))
		n := soft.neighbours(w, Stem(w))
		var meant []alt
		for _, a := range c.alts {
			if a.via == ViaMeaning {
				meant = append(meant, a)
			}
		}
		if len(meant) == 0 {
			t.Fatalf("%s: nothing close in meaning", w)
		}
		for _, a := range meant {
			i := slices.IndexFunc(n, func(x neighbour) bool { return x.term == a.term })
			if i < 0 || a.weight != scale*float64(n[i].cos) {
				t.Errorf("%s → %s: weight %v, want %v × cosine", w, soft.terms[a.term], a.weight, scale)
			}
		}
	}
}
