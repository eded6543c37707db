package search

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// A search over an analysed query runs these steps, in this order, each a
// function of its own:
//
//	weigh       what the query's words can cover, which no document has
//	accumulate  per document and word, the best alternative (gather), summed (fold)
//	lexical     the matched documents that count, scored: coverage, boost, Adjust
//	rankLexical / fuse
//	            into the top limit: relative lexical score, plus with vectors the
//	            cosine, and the documents that join on meaning alone
//	abstention  whether the floors refuse the best match, and why
//	hits        the ranked documents with their reasons

// accum is the per-query scratch space over all documents, pooled.
type accum struct {
	score, cover, cur []float64
	evidence          []float64
	curAlt            []int16
	curFields         []uint32
	fields            []uint32
	mask              []uint32
	specific          []bool
	nonLexicon        []uint8
	best              [][maxConcepts]int16 // per doc and concept: alt index + 1
	touched, curDocs  []int32
	// inLex marks the lexical candidates while semantic candidates are
	// gathered; lex is their reused list.
	inLex []bool
	sem   []float32
	lex   []cand
}

// semanticMargin is how far below the closest document in meaning an
// unmatched document may be and still join the candidates; measured on
// the evaluation sets, the margin does not move recall (0.02 to 1 score
// the same), so it is as tight as it goes: fewer tools padded in.
const semanticMargin = 0.02

// cand is a document being ranked: its score, coverage, lexical score
// relative to the best and cosine.
type cand struct {
	doc                int32
	score, cov, lx, sm float64
}

func newAccum(n int) *accum {
	return &accum{
		score: make([]float64, n), cover: make([]float64, n), cur: make([]float64, n), evidence: make([]float64, n),
		curAlt: make([]int16, n), curFields: make([]uint32, n), fields: make([]uint32, n),
		mask: make([]uint32, n), specific: make([]bool, n), nonLexicon: make([]uint8, n),
		best: make([][maxConcepts]int16, n), inLex: make([]bool, n), sem: make([]float32, n),
	}
}

func (a *accum) reset() {
	for _, d := range a.touched {
		a.evidence[d] = 0
		a.score[d], a.cover[d], a.fields[d], a.mask[d], a.specific[d], a.nonLexicon[d] = 0, 0, 0, 0, false, 0
		a.best[d] = [maxConcepts]int16{}
	}
	a.touched = a.touched[:0]
}

// Search ranks the documents for a query, best first, at most limit of
// them; skip, when set, leaves documents out (already ranked by a
// caller's own tier, quarantined).
func (ix *Index) Search(text string, limit int, skip func(doc int) bool) Result {
	q := ix.Analyze(text)
	return ix.SearchQuery(q, limit, skip)
}

// SearchQuery is Search over an analysed query.
func (ix *Index) SearchQuery(q *Query, limit int, skip func(doc int) bool) Result {
	if limit <= 0 || ix.n == 0 {
		return Result{}
	}
	if len(q.concepts) == 0 {
		return Result{Abstained: true, Why: "the query has no words to search for"}
	}
	qw := weigh(q.concepts)
	if qw.noWord && ix.docVecs == nil {
		return Result{Abstained: true, Why: fmt.Sprintf("no indexed word matches %s", quoteList(qw.unknown))}
	}
	a := ix.pool.Get().(*accum)
	defer func() { a.reset(); ix.pool.Put(a) }()
	ix.accumulate(a, q.concepts)
	var qv []float32
	if ix.docVecs != nil {
		qv = ix.queryVector(q)
	}
	lp := ix.lexical(a, q, qw.total)
	top := newRanking(limit, skip, ix.opts.Tie)
	bestSem := 0.0
	if qv == nil {
		rankLexical(&top, lp)
	} else {
		bestSem = ix.fuse(a, &top, lp, qv)
	}
	if why := ix.abstention(qw, lp, len(q.concepts), len(top.cands), qv != nil, bestSem); why != "" {
		return Result{Abstained: true, Why: why}
	}
	return ix.hits(a, q, top.cands)
}

// queryWeight is what a query weighs before any document is looked at.
type queryWeight struct {
	// total is the sum of the concepts' coverage weights: the whole a
	// document's coverage is a share of.
	total float64
	// unknown are the words no document has that still count in
	// coverage (numbers do not).
	unknown []string
	// qualifiers counts the known abbreviations no document uses.
	qualifiers int
	// noWord: no word of the query is an indexed word or reaches one
	// other than by meaning.
	noWord bool
}

// weigh sums what the query's concepts can cover and names the words no
// document has.
func weigh(concepts []concept) queryWeight {
	var w queryWeight
	known := false
	for _, c := range concepts {
		w.total += c.cover
		if c.qualifier {
			w.qualifiers++
		}
		if c.known {
			known = true
		} else if c.cover > 0 {
			w.unknown = append(w.unknown, c.word)
		}
	}
	// Words met only in meaning are no indexed word: the reason says the
	// query's words are unknown, and the cosine note says how close.
	w.noWord = !known && !slices.ContainsFunc(concepts, func(c concept) bool {
		return slices.ContainsFunc(c.alts, func(a alt) bool { return a.via != ViaMeaning })
	})
	return w
}

// accumulate adds, for each concept, each document's best alternative to
// the document's sums in a.
func (ix *Index) accumulate(a *accum, concepts []concept) {
	for ci := range concepts {
		c := &concepts[ci]
		cur := ix.gather(a, c)
		ix.fold(a, ci, c, cur)
		a.curDocs = cur[:0]
	}
}

// gather scores one concept in every document its alternatives reach:
// the best of idf × posting weight × alternative weight, in a.cur, with
// the alternative and the fields that gave it in a.curAlt and
// a.curFields. It returns the documents reached, in the order first
// reached.
func (ix *Index) gather(a *accum, c *concept) []int32 {
	cur := a.curDocs[:0]
	for ai, al := range c.alts {
		idf := float64(ix.idf[al.term])
		if al.idfCap > 0 {
			idf = min(idf, float64(al.idfCap))
		}
		for _, p := range ix.postings[al.term] {
			v := idf * float64(p.w) * al.weight
			d := p.doc
			if a.cur[d] == 0 {
				cur = append(cur, d)
			}
			if v > a.cur[d] {
				a.cur[d], a.curAlt[d], a.curFields[d] = v, int16(ai), p.fields
			}
		}
	}
	return cur
}

// fold adds concept ci's best match in the documents cur to their sums:
// score, coverage, evidence (not through WordNet or meaning, not only in
// weak fields), the words and fields matched, and whether the match is
// specific: a rare word, or two words that are not synonyms ("create
// directory" is specific when each alone is common). It clears a.cur.
func (ix *Index) fold(a *accum, ci int, c *concept, cur []int32) {
	for _, d := range cur {
		if a.mask[d] == 0 {
			a.touched = append(a.touched, d)
		}
		al := c.alts[a.curAlt[d]]
		literal := al.via != ViaLexicon && al.via != ViaMeaning
		a.score[d] += a.cur[d]
		a.cover[d] += c.cover * al.weight
		if literal && a.curFields[d]&^ix.weakMask != 0 {
			a.evidence[d] += c.cover * al.weight
		}
		a.mask[d] |= 1 << ci
		a.fields[d] |= a.curFields[d]
		a.best[d][ci] = a.curAlt[d] + 1
		if literal {
			if len(ix.postings[al.term]) <= ix.specificDF || a.nonLexicon[d] > 0 {
				a.specific[d] = true
			}
			a.nonLexicon[d]++
		}
		a.cur[d] = 0
	}
}

// lexicalPass is the documents the query's words matched and that count,
// scored, and what abstention needs to know of them.
type lexicalPass struct {
	cands []cand
	// max is the best score, bestCov the best coverage, bestEv the most
	// evidence (in rare words).
	max, bestCov, bestEv float64
	// anySpecific: some document matched more than one common word.
	anySpecific bool
}

// lexical scores the documents accumulate reached: score × coverage^e ×
// boost (× WeakOnly when matched only in weak fields) × Adjust. A
// document that matched only one common word of several, or only part
// of the query and only in weak fields, does not count.
func (ix *Index) lexical(a *accum, q *Query, totalCover float64) lexicalPass {
	full := uint32(1)<<len(q.concepts) - 1
	lp := lexicalPass{cands: a.lex[:0]}
	for _, d := range a.touched {
		if !a.specific[d] && len(q.concepts) > 1 {
			continue // only one common word of several matched
		}
		lp.anySpecific = true
		isFull := a.mask[d] == full
		onlyWeak := a.fields[d]&^ix.weakMask == 0
		if onlyWeak && !isFull {
			continue
		}
		cov := 1.0
		if totalCover > 0 {
			cov = min(a.cover[d]/totalCover, 1)
		}
		lp.bestCov = max(lp.bestCov, cov)
		lp.bestEv = max(lp.bestEv, a.evidence[d]/ix.maxIDF)
		sc := a.score[d] * coverageFactor(cov, ix.opts.CoverageExp) * float64(ix.boost[d])
		if onlyWeak {
			sc *= ix.opts.WeakOnly
		}
		if ix.opts.Adjust != nil {
			sc *= ix.opts.Adjust(int(d), q, Matched{Fields: a.fields[d], Full: isFull})
		}
		lp.max = max(lp.max, sc)
		lp.cands = append(lp.cands, cand{doc: d, score: sc, cov: cov, lx: sc})
	}
	a.lex = lp.cands
	return lp
}

// ranking keeps the best limit candidates, best first, as they come.
type ranking struct {
	limit int
	skip  func(doc int) bool
	tie   func(a, b int) int
	cands []cand
}

func newRanking(limit int, skip func(doc int) bool, tie func(a, b int) int) ranking {
	return ranking{limit: limit, skip: skip, tie: tie, cands: make([]cand, 0, limit+1)}
}

// better orders candidates: higher score, then the caller's tie rule,
// then document order.
func (r *ranking) better(x, y cand) bool {
	if x.score != y.score {
		return x.score > y.score
	}
	if r.tie != nil {
		if c := r.tie(int(x.doc), int(y.doc)); c != 0 {
			return c < 0
		}
	}
	return x.doc < y.doc
}

// push places c among the best, unless it ranks below all of a full
// ranking or the caller skips it.
func (r *ranking) push(c cand) {
	if len(r.cands) == r.limit && !r.better(c, r.cands[r.limit-1]) {
		return
	}
	// Skipped documents still count for confidence: a document a
	// caller's own tier already answers shows the query is answerable.
	// Asked only here, since few documents get this far.
	if r.skip != nil && r.skip(int(c.doc)) {
		return
	}
	i := len(r.cands)
	r.cands = append(r.cands, c)
	for i > 0 && r.better(c, r.cands[i-1]) {
		r.cands[i] = r.cands[i-1]
		i--
	}
	r.cands[i] = c
	if len(r.cands) > r.limit {
		r.cands = r.cands[:r.limit]
	}
}

// rankLexical ranks the lexical candidates when there are no vectors,
// each with its score relative to the best as its lexical signal.
func rankLexical(top *ranking, lp lexicalPass) {
	for _, c := range lp.cands {
		c.lx = 1
		if lp.max > 0 {
			c.lx = c.score / lp.max
		}
		top.push(c)
	}
}

// fuse ranks the lexical candidates by their score relative to the best
// plus Semantic times their cosine with the query vector qv, and every
// other document about as close in meaning as the closest on its cosine
// alone. It returns the closest document's cosine.
func (ix *Index) fuse(a *accum, top *ranking, lp lexicalPass, qv []float32) float64 {
	w := ix.opts.Semantic
	for _, c := range lp.cands {
		a.inLex[c.doc] = true
		c.lx = c.score / lp.max
		c.sm = float64(dot(qv, ix.docVec(c.doc)))
		c.score = c.lx + w*c.sm
		top.push(c)
	}
	bestSem := 0.0
	for d := range int32(ix.n) {
		a.sem[d] = dot(qv, ix.docVec(d))
		bestSem = max(bestSem, float64(a.sem[d]))
	}
	// A document no word matched joins only when it is about as close
	// in meaning as the closest: the answer is not padded with
	// documents merely on the same subject.
	join := max(ix.opts.SemanticJoin, bestSem-semanticMargin)
	for d := range int32(ix.n) {
		if sm := float64(a.sem[d]); !a.inLex[d] && sm >= join {
			top.push(cand{doc: d, score: w * sm, sm: sm})
		}
	}
	for _, c := range lp.cands {
		a.inLex[c.doc] = false
	}
	return bestSem
}

// abstention is why the search answers nothing, "" when it answers:
// nothing was ranked, or the lexical floors refuse the best match and no
// document is close enough in meaning to answer instead. concepts is the
// query's number of concepts, fused whether meaning was fused in, bestSem
// the closest document's cosine.
func (ix *Index) abstention(qw queryWeight, lp lexicalPass, concepts, ranked int, fused bool, bestSem float64) string {
	floor := ix.opts.SemanticFloor
	byMeaning := fused && floor > 0 && bestSem >= floor
	if ranked > 0 && (!ix.refuses(lp, concepts-qw.qualifiers) || byMeaning) {
		return ""
	}
	var why string
	switch {
	case qw.noWord:
		why = fmt.Sprintf("no indexed word matches %s", quoteList(qw.unknown))
	case !lp.anySpecific:
		why = "only words too common to tell documents apart matched"
	case lp.bestCov < ix.opts.MinConfidence:
		why = fmt.Sprintf("the best match covers %d%% of the query, under the %d%% floor", int(lp.bestCov*100), int(ix.opts.MinConfidence*100))
	default:
		why = "the best match rests on too few distinctive words"
		if len(qw.unknown) > 0 {
			why += fmt.Sprintf("; nothing mentions %s", quoteList(qw.unknown))
		}
	}
	if fused && floor > 0 {
		why += fmt.Sprintf("; no document is close enough in meaning (%.2f, under %.2f)", bestSem, floor)
	}
	return why
}

// refuses reports whether the lexical floors refuse the best match: no
// document counts, the best covers less than MinConfidence, or a query
// of three subject words or more rests on less than MinEvidence rare
// words unless nearly all of it is covered.
func (ix *Index) refuses(lp lexicalPass, subjects int) bool {
	return len(lp.cands) == 0 || lp.bestCov < ix.opts.MinConfidence ||
		(lp.bestEv < ix.opts.MinEvidence && lp.bestCov < fullCover && subjects >= 3)
}

// hits renders the ranked candidates; a lexical match carries its
// evidence and a reason per matched word.
func (ix *Index) hits(a *accum, q *Query, top []cand) Result {
	out := Result{Hits: make([]Hit, len(top))}
	for i, c := range top {
		h := Hit{Doc: int(c.doc), Score: c.score, Confidence: c.cov, Lexical: c.lx, Semantic: c.sm}
		if c.lx > 0 {
			h.Evidence = a.evidence[c.doc] / ix.maxIDF
			h.Reasons, h.Expanded = ix.reasons(a, q, c.doc)
		}
		out.Hits[i] = h
	}
	return out
}

// reasons says, in query order, which term each matched word of the
// query met in doc and in which field, and whether any was met only
// through expansion.
func (ix *Index) reasons(a *accum, q *Query, doc int32) ([]Reason, bool) {
	var rs []Reason
	expanded := false
	for ci, con := range q.concepts {
		bi := a.best[doc][ci]
		if bi == 0 {
			continue
		}
		al := con.alts[bi-1]
		rs = append(rs, Reason{Field: ix.fieldOf(al.term, doc), Word: con.word, Term: ix.terms[al.term], Via: al.via})
		if al.via.Expanded() {
			expanded = true
		}
	}
	return rs, expanded
}

// fieldOf returns the heaviest field of doc that holds term.
func (ix *Index) fieldOf(term int32, doc int32) int {
	ps := ix.postings[term]
	i, ok := slices.BinarySearchFunc(ps, doc, func(p posting, d int32) int { return int(p.doc - d) })
	if !ok {
		return 0
	}
	best, bw := 0, -1.0
	for f, fl := range ix.opts.Fields {
		if ps[i].fields&(1<<f) != 0 && fl.Weight > bw {
			best, bw = f, fl.Weight
		}
	}
	return best
}

func quoteList(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = "'" + w + "'"
	}
	return strings.Join(q, ", ")
}

// coverageFactor is cov^exp, without math.Pow for the usual exponents:
// it runs once per matched document.
func coverageFactor(cov, exp float64) float64 {
	switch exp {
	case 1:
		return cov
	case 2:
		return cov * cov
	case 0.5:
		return math.Sqrt(cov)
	}
	return math.Pow(cov, exp)
}
