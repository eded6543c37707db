package search

import (
	"slices"
	"strings"
	"testing"
)

// The steps of SearchQuery, each on its own (ranking.go). Search's own
// tests (search_test.go, semantic_test.go) prove the steps together.

// stepIndex is twelve documents: "directory" in three (specific: the
// floor is three documents), "run" and "thing" in nine (common).
func stepIndex(t *testing.T, opts Options) *Index {
	t.Helper()
	docs := []Doc{
		{Fields: []string{"create_directory", "Make a new folder.", ""}},
		{Fields: []string{"remove", "Remove a directory.", ""}},
		{Fields: []string{"notes", "Unrelated.", "create directory"}},
		{Fields: []string{"folder", "Folder tools.", ""}},
		{Fields: []string{"runner", "Run fast.", ""}},
	}
	for range 7 {
		docs = append(docs, Doc{Fields: []string{"filler", "Run the thing.", ""}})
	}
	if opts.Fields == nil {
		opts.Fields = testFields
	}
	return Build(opts, docs)
}

func term(t *testing.T, ix *Index, stem string) int32 {
	t.Helper()
	id, ok := ix.ids[stem]
	if !ok {
		t.Fatalf("no term %q", stem)
	}
	return id
}

// posted is the part of a document's score one term gives it: idf ×
// the posting's saturated weight.
func posted(ix *Index, term int32, doc int32) float64 {
	for _, p := range ix.postings[term] {
		if p.doc == doc {
			return float64(ix.idf[term]) * float64(p.w)
		}
	}
	return 0
}

func TestWeighSumsCoverageAndNamesUnknownWords(t *testing.T) {
	w := weigh([]concept{
		{word: "deploy", cover: 2, known: true, alts: []alt{{via: ViaExact}}},
		{word: "denver", cover: 0.5},
		{word: "42", cover: 0},
		{word: "ts", cover: 0.25, qualifier: true},
	})
	if w.total != 2.75 || !slices.Equal(w.unknown, []string{"denver", "ts"}) || w.qualifiers != 1 || w.noWord {
		t.Fatalf("weigh = %+v", w)
	}
	// Words met only in meaning are no indexed word; one met any other
	// way is.
	meaning := []concept{{word: "album", cover: 0.5, alts: []alt{{via: ViaMeaning}}}}
	if w := weigh(meaning); !w.noWord || !slices.Equal(w.unknown, []string{"album"}) {
		t.Fatalf("meaning only: %+v", w)
	}
	meaning[0].alts = append(meaning[0].alts, alt{via: ViaTypo})
	if w := weigh(meaning); w.noWord {
		t.Fatalf("a typo correction is an indexed word: %+v", w)
	}
}

// gather keeps, per document, the alternative that scores most, capped
// at the word's own idf, and lists the documents in the order reached.
func TestGatherKeepsEachDocumentsBestAlternative(t *testing.T) {
	ix := stepIndex(t, Options{})
	a := newAccum(ix.n)
	dir, folder := term(t, ix, "directori"), term(t, ix, "folder")
	c := &concept{alts: []alt{
		{term: folder, weight: 0.5, via: ViaLexicon},
		{term: dir, weight: 1, via: ViaExact},
	}}
	cur := ix.gather(a, c)
	if !slices.Equal(cur, []int32{0, 3, 1, 2}) {
		t.Fatalf("documents reached: %v", cur)
	}
	if a.curAlt[0] != 1 || a.cur[0] != posted(ix, dir, 0) {
		t.Errorf("doc 0: alt %d, %v; want the exact alternative, %v", a.curAlt[0], a.cur[0], posted(ix, dir, 0))
	}
	if a.curAlt[3] != 0 || a.cur[3] != 0.5*posted(ix, folder, 3) || a.curFields[3] != 1|2 {
		t.Errorf("doc 3: alt %d, %v, fields %b", a.curAlt[3], a.cur[3], a.curFields[3])
	}
	// A derived form weighs no more than the word it was reached from.
	for _, d := range cur {
		a.cur[d] = 0
	}
	capped := &concept{alts: []alt{{term: dir, weight: 1, via: ViaPrefix, idfCap: ix.idf[dir] / 2}}}
	ix.gather(a, capped)
	if want := float64(ix.idf[dir]/2) * posted(ix, dir, 1) / float64(ix.idf[dir]); a.cur[1] != want {
		t.Errorf("capped idf: %v, want %v", a.cur[1], want)
	}
}

// fold sums each concept's best match: coverage by how the word matched,
// evidence only outside weak fields and not through WordNet or meaning,
// and a match is specific on a rare word or on two words that are not
// synonyms.
func TestFoldSumsCoverageEvidenceAndSpecificity(t *testing.T) {
	ix := stepIndex(t, Options{})
	a := newAccum(ix.n)
	concepts := []concept{
		{word: "create", cover: 2, alts: []alt{{term: term(t, ix, "creat"), weight: 1, via: ViaExact}}},
		{word: "directory", cover: 3, alts: []alt{{term: term(t, ix, "directori"), weight: 1, via: ViaExact}}},
		{word: "folder", cover: 1, alts: []alt{{term: term(t, ix, "folder"), weight: 0.5, via: ViaLexicon}}},
	}
	ix.accumulate(a, concepts)
	if !slices.Equal(a.touched, []int32{0, 2, 1, 3}) {
		t.Fatalf("touched %v", a.touched)
	}
	for _, c := range []struct {
		doc              int32
		mask             uint32
		cover, evidence  float64
		specific         bool
		fields, nonLexic uint32
	}{
		{doc: 0, mask: 0b111, cover: 5.5, evidence: 5, specific: true, fields: 0b011, nonLexic: 2},
		{doc: 2, mask: 0b011, cover: 5, evidence: 0, specific: true, fields: 0b100, nonLexic: 2}, // body only
		{doc: 1, mask: 0b010, cover: 3, evidence: 3, specific: true, fields: 0b010, nonLexic: 1},
		{doc: 3, mask: 0b100, cover: 0.5, evidence: 0, specific: false, fields: 0b011, nonLexic: 0}, // a synonym only
	} {
		d := c.doc
		if a.mask[d] != c.mask || a.cover[d] != c.cover || a.evidence[d] != c.evidence || a.specific[d] != c.specific ||
			a.fields[d] != c.fields || uint32(a.nonLexicon[d]) != c.nonLexic {
			t.Errorf("doc %d: mask %b cover %v evidence %v specific %v fields %b literal %d; want %+v",
				d, a.mask[d], a.cover[d], a.evidence[d], a.specific[d], a.fields[d], a.nonLexicon[d], c)
		}
	}
	if want := posted(ix, term(t, ix, "creat"), 0) + posted(ix, term(t, ix, "directori"), 0) + 0.5*posted(ix, term(t, ix, "folder"), 0); a.score[0] != want {
		t.Errorf("doc 0 score %v, want %v", a.score[0], want)
	}
	if a.best[0] != [maxConcepts]int16{1, 1, 1} || a.best[1] != [maxConcepts]int16{0, 1, 0} {
		t.Errorf("best alternatives: %v %v", a.best[0], a.best[1])
	}
	if slices.ContainsFunc(a.cur, func(v float64) bool { return v != 0 }) {
		t.Error("fold leaves a.cur set")
	}
	// Two common words together are specific; one alone is not.
	a.reset()
	common := []concept{
		{word: "run", cover: 1, alts: []alt{{term: term(t, ix, "run"), weight: 1}}},
		{word: "thing", cover: 1, alts: []alt{{term: term(t, ix, "thing"), weight: 1}}},
	}
	ix.accumulate(a, common)
	if !a.specific[5] || a.specific[4] {
		t.Errorf("run thing: filler specific %v, runner specific %v", a.specific[5], a.specific[4])
	}
}

// lexical drops a document matched on one common word of several, or
// only partly and only in weak fields, and scores the rest by coverage,
// boost, WeakOnly and Adjust.
func TestLexicalScoresTheDocumentsThatCount(t *testing.T) {
	var matched []Matched
	ix := stepIndex(t, Options{Adjust: func(d int, q *Query, m Matched) float64 {
		matched = append(matched, m)
		if d == 6 {
			return 3
		}
		return 1
	}})
	ix.boost[7] = 2
	a := newAccum(ix.n)
	set := func(d int32, specific bool, mask, fields uint32, score, cover, evidence float64) {
		a.touched = append(a.touched, d)
		a.specific[d], a.mask[d], a.fields[d], a.score[d], a.cover[d], a.evidence[d] = specific, mask, fields, score, cover, evidence
	}
	set(0, true, 0b11, 0b001, 2, 3, 2)   // 3 of 4 covered
	set(1, false, 0b01, 0b001, 9, 4, 9)  // one common word of two
	set(2, true, 0b01, 0b100, 9, 4, 9)   // part of the query, body only
	set(3, true, 0b11, 0b100, 1, 4, 0)   // all of it, body only
	set(6, true, 0b11, 0b010, 1, 4, 0)   // adjusted
	set(7, true, 0b11, 0b010, 1, 8, 0.5) // boosted, coverage capped at 1
	q := &Query{concepts: make([]concept, 2)}
	lp := ix.lexical(a, q, 4)
	want := []cand{
		{doc: 0, score: 2 * 0.75 * 0.75, cov: 0.75, lx: 2 * 0.75 * 0.75},
		{doc: 3, score: 0.3, cov: 1, lx: 0.3},
		{doc: 6, score: 3, cov: 1, lx: 3},
		{doc: 7, score: 2, cov: 1, lx: 2},
	}
	if !slices.Equal(lp.cands, want) {
		t.Fatalf("candidates %+v, want %+v", lp.cands, want)
	}
	if lp.max != 3 || lp.bestCov != 1 || lp.bestEv != 2/ix.maxIDF || !lp.anySpecific {
		t.Errorf("pass %+v", lp)
	}
	if len(matched) != 4 || matched[0] != (Matched{Fields: 0b001, Full: true}) {
		t.Errorf("Adjust was told %+v", matched)
	}
	// Evidence and coverage are the best of the documents that count.
	// With one word, a common match counts (and the body-only document 2
	// now matches all of the query); with none specific, nothing counts
	// and the pass says so.
	if lp := ix.lexical(a, &Query{concepts: make([]concept, 1)}, 4); len(lp.cands) != 5 || lp.cands[1].doc != 1 || lp.cands[2].doc != 2 {
		t.Errorf("one word: %d candidates", len(lp.cands))
	}
	a.reset()
	set(1, false, 0b01, 0b001, 9, 4, 9)
	if lp := ix.lexical(a, q, 4); len(lp.cands) != 0 || lp.anySpecific {
		t.Errorf("only a common word: %+v", lp)
	}
}

// A ranking keeps the best limit, by score, then the tie rule, then
// document order, and asks the caller about skipping only for
// candidates that would enter.
func TestRankingKeepsTheBestInOrder(t *testing.T) {
	var asked []int
	skip := func(d int) bool { asked = append(asked, d); return d == 9 }
	scores := []cand{{doc: 1, score: 1}, {doc: 2, score: 3}, {doc: 4, score: 2}, {doc: 3, score: 2}, {doc: 9, score: 5}, {doc: 5, score: 0.5}, {doc: 6, score: 4}}
	docs := func(r ranking) []int32 {
		var out []int32
		for _, c := range r.cands {
			out = append(out, c.doc)
		}
		return out
	}
	r := newRanking(3, skip, nil)
	for _, c := range scores {
		r.push(c)
	}
	if got := docs(r); !slices.Equal(got, []int32{6, 2, 3}) {
		t.Errorf("ranked %v", got)
	}
	if slices.Contains(asked, 5) {
		t.Errorf("skip asked about a candidate below a full ranking: %v", asked)
	}
	r = newRanking(3, nil, func(a, b int) int { return b - a })
	for _, c := range scores {
		r.push(c)
	}
	if got := docs(r); !slices.Equal(got, []int32{9, 6, 2}) {
		t.Errorf("without skip: %v", got)
	}
	r = newRanking(4, nil, func(a, b int) int { return b - a })
	for _, c := range scores {
		r.push(c)
	}
	if got := docs(r); !slices.Equal(got, []int32{9, 6, 2, 4}) {
		t.Errorf("tie rule: %v", got)
	}
}

// Without vectors, a candidate's lexical signal is its score relative to
// the best (1 when the best is 0).
func TestRankLexicalScoresRelativeToTheBest(t *testing.T) {
	r := newRanking(5, nil, nil)
	rankLexical(&r, lexicalPass{cands: []cand{{doc: 0, score: 1}, {doc: 1, score: 4}}, max: 4})
	if r.cands[0].doc != 1 || r.cands[0].lx != 1 || r.cands[1].lx != 0.25 || r.cands[1].score != 1 {
		t.Errorf("ranked %+v", r.cands)
	}
	r = newRanking(5, nil, nil)
	rankLexical(&r, lexicalPass{cands: []cand{{doc: 0, score: 0}}})
	if r.cands[0].lx != 1 {
		t.Errorf("zero best: %+v", r.cands)
	}
}

// fuse scores a lexical candidate by its relative score plus Semantic ×
// cosine, lets in an unmatched document within the margin of the closest
// (and over SemanticJoin), and clears its marks.
func TestFuseAddsMeaningAndJoinsTheClosest(t *testing.T) {
	ix := Build(Options{Fields: testFields, Semantic: 0.5, SemanticJoin: 0.3}, meaningDocs)
	qv := ix.queryVector(ix.Analyze("write a letter to my landlord"))
	cos := make([]float64, ix.n)
	best := 0
	for d := range cos {
		cos[d] = float64(dot(qv, ix.docVec(int32(d))))
		if cos[d] > cos[best] {
			best = d
		}
	}
	if best != 2 || cos[best] < 0.3 {
		t.Fatalf("the email tool should be closest: %v", cos)
	}
	lexDoc := int32(0)
	a := newAccum(ix.n)
	top := newRanking(5, nil, nil)
	got := ix.fuse(a, &top, lexicalPass{cands: []cand{{doc: lexDoc, score: 2}}, max: 4}, qv)
	if got != cos[best] {
		t.Errorf("closest cosine %v, want %v", got, cos[best])
	}
	var joined []int32
	for _, c := range top.cands {
		switch {
		case c.doc == lexDoc:
			if c.lx != 0.5 || c.sm != cos[lexDoc] || c.score != 0.5+0.5*cos[lexDoc] {
				t.Errorf("lexical candidate %+v", c)
			}
		default:
			joined = append(joined, c.doc)
			if c.lx != 0 || c.score != 0.5*c.sm {
				t.Errorf("joined candidate %+v", c)
			}
		}
	}
	for d := range cos {
		in := slices.Contains(joined, int32(d))
		if want := d != int(lexDoc) && cos[d] >= max(0.3, cos[best]-semanticMargin); in != want {
			t.Errorf("doc %d (cos %.3f) joined %v, want %v", d, cos[d], in, want)
		}
	}
	if slices.Contains(a.inLex, true) {
		t.Error("fuse leaves lexical marks set")
	}
}

// abstention answers when something was ranked and the lexical floors
// pass or meaning answers; otherwise it says which floor refused.
func TestAbstentionSaysWhichFloorRefused(t *testing.T) {
	ix := Build(Options{Fields: testFields, MinConfidence: 0.4, MinEvidence: 0.5, SemanticFloor: 0.8}, meaningDocs)
	good := lexicalPass{cands: make([]cand, 1), bestCov: 0.5, bestEv: 1, anySpecific: true}
	if why := ix.abstention(queryWeight{}, good, 3, 1, false, 0); why != "" {
		t.Errorf("answerable: %q", why)
	}
	if why := ix.abstention(queryWeight{}, good, 3, 0, false, 0); why == "" {
		t.Error("nothing ranked, yet answered")
	}
	thin := good
	thin.bestEv = 0.4
	for _, c := range []struct {
		name      string
		qw        queryWeight
		lp        lexicalPass
		concepts  int
		fused     bool
		sem       float64
		why       string // "" answers; else a prefix
		whySuffix string
	}{
		{"no word", queryWeight{noWord: true, unknown: []string{"zzqx"}}, lexicalPass{}, 1, false, 0, "no indexed word matches 'zzqx'", ""},
		{"common only", queryWeight{}, lexicalPass{}, 2, false, 0, "only words too common", ""},
		{"coverage", queryWeight{}, lexicalPass{cands: make([]cand, 1), bestCov: 0.39, bestEv: 1, anySpecific: true}, 1, false, 0, "the best match covers 39% of the query, under the 40% floor", ""},
		{"evidence", queryWeight{unknown: []string{"denver"}}, thin, 3, false, 0, "the best match rests on too few distinctive words; nothing mentions 'denver'", ""},
		{"evidence, two subjects", queryWeight{qualifiers: 1}, thin, 3, false, 0, "", ""},
		{"evidence, nearly all covered", queryWeight{}, lexicalPass{cands: make([]cand, 1), bestCov: fullCover, bestEv: 0.4, anySpecific: true}, 3, false, 0, "", ""},
		{"meaning answers", queryWeight{}, thin, 3, true, 0.8, "", ""},
		{"meaning too far", queryWeight{}, thin, 3, true, 0.79, "the best match rests on too few", "; no document is close enough in meaning (0.79, under 0.80)"},
	} {
		why := ix.abstention(c.qw, c.lp, c.concepts, 1, c.fused, c.sem)
		if (c.why == "") != (why == "") || !strings.HasPrefix(why, c.why) || !strings.HasSuffix(why, c.whySuffix) {
			t.Errorf("%s: %q, want %q…%q", c.name, why, c.why, c.whySuffix)
		}
	}
}

// hits carries, for a lexical match only, the evidence and a reason per
// matched word in query order, and marks a match reached by expansion.
func TestHitsGiveReasonsInQueryOrder(t *testing.T) {
	ix := stepIndex(t, Options{})
	a := newAccum(ix.n)
	q := &Query{concepts: []concept{
		{word: "create", alts: []alt{{term: term(t, ix, "creat"), via: ViaExact}}},
		{word: "dir", alts: []alt{{term: term(t, ix, "remov"), via: ViaExact}, {term: term(t, ix, "directori"), via: ViaJargon}}},
		{word: "tree", alts: []alt{{term: term(t, ix, "thing"), via: ViaTypo}}},
	}}
	a.best[0] = [maxConcepts]int16{1, 2, 0}
	a.evidence[0] = ix.maxIDF
	// Document 3 joined on meaning alone: what the accumulator holds for
	// it is no reason.
	a.best[3] = [maxConcepts]int16{1, 0, 0}
	a.evidence[3] = ix.maxIDF
	res := ix.hits(a, q, []cand{{doc: 0, score: 2, cov: 0.5, lx: 1, sm: 0.25}, {doc: 3, score: 0.4, sm: 0.8}})
	want := []Reason{{Field: 0, Word: "create", Term: "creat", Via: ViaExact}, {Field: 0, Word: "dir", Term: "directori", Via: ViaJargon}}
	h := res.Hits[0]
	if h.Doc != 0 || h.Score != 2 || h.Confidence != 0.5 || h.Lexical != 1 || h.Semantic != 0.25 || h.Evidence != 1 ||
		!slices.Equal(h.Reasons, want) || !h.Expanded {
		t.Errorf("lexical hit %+v", h)
	}
	if h := res.Hits[1]; h.Doc != 3 || h.Reasons != nil || h.Evidence != 0 || h.Expanded || h.Semantic != 0.8 {
		t.Errorf("meaning-only hit %+v", h)
	}
	a.best[0] = [maxConcepts]int16{1, 1, 1} // exact, exact, a typo
	if h := ix.hits(a, q, []cand{{doc: 0, lx: 1}}).Hits[0]; h.Expanded || len(h.Reasons) != 3 {
		t.Errorf("no expanded word, yet %+v", h)
	}
}
