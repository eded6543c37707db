package search

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Field is one part of a document the index weighs on its own.
type Field struct {
	// Name is what reasons call the field ("name", "description").
	Name string
	// Weight says how much a word here is about the document.
	Weight float64
	// B is BM25's length normalisation for the field: 0 for short fields
	// whose length means nothing, up to 1 for prose.
	B float64
	// Weak marks long text that mentions almost anything once (a skill's
	// body, a tool's parameter descriptions): a document matched only in
	// weak fields weighs little, and one matched only partly there not at
	// all.
	Weak bool
}

// Options are a caller's fields, weights and rules.
type Options struct {
	Fields []Field
	// K1 is BM25's term-frequency saturation; 1.2 when zero.
	K1 float64
	// CoverageExp scales a score by coverage^CoverageExp, coverage being
	// the idf-weighted share of the query a document matches; 2 when
	// zero.
	CoverageExp float64
	// WeakOnly multiplies the score of a document matched only in weak
	// fields; 0.3 when zero.
	WeakOnly float64
	// SpecificShare is the largest share of the documents a term may
	// occur in and still say something specific; a document that matches
	// only terms more common than that is no match. 0.12 when zero.
	SpecificShare float64
	// MinConfidence is the abstention floor: when no document covers at
	// least this share of the query (see Hit.Confidence), the search
	// returns nothing and says why.
	MinConfidence float64
	// MinEvidence is the second abstention floor: the best document must
	// also have matched about this many rare words' worth (Hit.Evidence),
	// so a long query (three words or more, not counting abbreviations
	// no document uses) is not answered on one incidental word.
	MinEvidence float64
	// Semantic is the weight of offline semantic similarity in a
	// document's score (see vectors.go): each document and query is the
	// idf-weighted mean of its words' vectors, and a document's score is
	// its lexical score, relative to the best one's, plus Semantic times
	// the cosine of the two. The documents most similar in meaning join
	// the candidates even when they share no word with the query. 0 turns
	// it off.
	Semantic float64
	// SemanticFloor is the cosine at which the most similar document
	// answers a query the lexical floors would abstain on; 0 never.
	SemanticFloor float64
	// SemanticJoin is the cosine at which a document no query word
	// matched joins the candidates; 1 when zero (never).
	SemanticJoin float64
	// SoftMatch is the cosine at which a query word meets an indexed
	// term close in meaning (ViaMeaning); 0 never. It needs Semantic.
	SoftMatch float64
	// Tie orders documents of equal score (negative: a first); document
	// order when nil.
	Tie func(a, b int) int
	// Adjust, when set, multiplies a matched document's score: phrase
	// bonuses, penalties for material the query does not ask for.
	Adjust func(doc int, q *Query, m Matched) float64
}

// Doc is one document: its text per field, in Options.Fields order, and
// a fixed rank factor (1 when zero).
type Doc struct {
	Fields []string
	Boost  float64
}

// Matched is what Adjust learns about a document's match.
type Matched struct {
	// Fields has bit f set when field f holds a matched term.
	Fields uint32
	// Full is true when every word of the query matched.
	Full bool
}

// Reason says why a document matched one query word.
type Reason struct {
	Field int    // index into Options.Fields
	Word  string // the query word
	Term  string // the indexed stem it met
	Via   Via
}

// Hit is one ranked document.
type Hit struct {
	Doc   int
	Score float64
	// Confidence is the idf-weighted share of the query the document
	// covers, each word counted by how it matched (exact 1, a synonym
	// less): what abstention compares with MinConfidence.
	Confidence float64
	// Evidence is the same sum over the words matched outside weak fields
	// and not through WordNet or meaning, divided not by the query's
	// total but by the idf of a word found in one document: about how
	// many rare words the document really matched.
	Evidence float64
	// Reasons, one per matched query word, in query order.
	Reasons []Reason
	// Expanded is true when a word matched only through expansion.
	Expanded bool
	// Lexical is the BM25F part of Score, relative to the best lexical
	// match (0 when no word matched); Semantic is the cosine of the
	// document's and the query's vectors (0 when semantic similarity is
	// off or the vectors know no word of either).
	Lexical, Semantic float64
}

// Relevance renders a relevance match's signals for explain, after its
// tier label: "tier <tier>: lexical L, meaning M, score S", the lexical
// score relative to the best, the cosine in meaning and the fused score.
// alone adds that it joined on meaning alone (no query word matched it,
// nor did it match some other way, such as a name's abbreviation).
func Relevance(tier string, lexical, semantic, score float64, alone bool) string {
	s := fmt.Sprintf("tier %s: lexical %.2f, meaning %.2f, score %.2f", tier, lexical, semantic, score)
	if alone {
		s += "; no query word matched: joined on meaning alone"
	}
	return s
}

// Result is a search's answer.
type Result struct {
	Hits []Hit
	// Abstained is true when documents matched but none passed the
	// confidence floor, or nothing matched at all; Why says which.
	Abstained bool
	Why       string
}

// posting is one document's weight for one term: the BM25F saturation
// tf/(k1+tf) over the weighted, length-normalised field frequencies.
type posting struct {
	doc    int32
	w      float32
	fields uint32
}

// Index is an immutable inverted index over a set of documents. Search is
// safe for concurrent use.
type Index struct {
	opts   Options
	n      int
	ids    map[string]int32
	terms  []string // by id
	sorted []int32  // ids in term order, for prefix lookups
	// raw are the words as written, each with its term, for typo
	// lookups: a misspelling is closer to the word than to its stem
	// ("naviagte" is one swap from "navigate", not from "navig").
	raw      []string
	rawTerm  []int32
	byLen    [][]int32 // raw word indexes by length
	masks    []uint64  // letter mask by raw word
	postings [][]posting
	idf      []float32
	boost    []float32
	maxIDF   float64
	pool     sync.Pool
	// termVecs holds a unit vector per term (dims each, zero when the
	// table knows no form of it), docVecs one per document; both nil
	// when Options.Semantic is 0.
	termVecs, docVecs []float32
	termHas           []bool
	// near is soft matching's vocabulary (vectors.go); nil when
	// Options.SoftMatch is 0.
	near *neighbourhood
}

// maxConcepts bounds the words of a query that are matched.
const maxConcepts = 16

// Build indexes docs.
func Build(opts Options, docs []Doc) *Index {
	if opts.K1 == 0 {
		opts.K1 = 1.2
	}
	if opts.CoverageExp == 0 {
		opts.CoverageExp = 2
	}
	if opts.WeakOnly == 0 {
		opts.WeakOnly = 0.3
	}
	if opts.SpecificShare == 0 {
		opts.SpecificShare = 0.12
	}
	if opts.SemanticJoin == 0 {
		opts.SemanticJoin = 1
	}
	nf := len(opts.Fields)
	ix := &Index{opts: opts, n: len(docs), ids: map[string]int32{}, boost: make([]float32, len(docs))}
	ix.terms = nil
	type fieldTF struct {
		id    int32
		field uint8
		count uint16
	}
	perDoc := make([][]fieldTF, len(docs))
	lengths := make([][]int, len(docs))
	total := make([]float64, nf)
	counts := map[int32]uint16{}
	rawSeen := map[string]bool{}
	for d, doc := range docs {
		ix.boost[d] = float32(doc.Boost)
		if doc.Boost == 0 {
			ix.boost[d] = 1
		}
		lengths[d] = make([]int, nf)
		for f := 0; f < nf && f < len(doc.Fields); f++ {
			ts := ix.intern(doc.Fields[f], rawSeen)
			lengths[d][f] = len(ts)
			total[f] += float64(len(ts))
			clear(counts)
			for _, id := range ts {
				if counts[id] < math.MaxUint16 {
					counts[id]++
				}
			}
			for id, c := range counts {
				perDoc[d] = append(perDoc[d], fieldTF{id, uint8(f), c})
			}
		}
	}
	avg := make([]float64, nf)
	for f := range avg {
		avg[f] = max(total[f]/float64(max(len(docs), 1)), 1)
	}
	ix.postings = make([][]posting, len(ix.terms))
	for d, tfs := range perDoc {
		slices.SortFunc(tfs, func(a, b fieldTF) int { return int(a.id - b.id) })
		for i := 0; i < len(tfs); {
			id := tfs[i].id
			var tf float64
			var bits uint32
			for ; i < len(tfs) && tfs[i].id == id; i++ {
				f := opts.Fields[tfs[i].field]
				norm := 1 - f.B + f.B*float64(lengths[d][tfs[i].field])/avg[tfs[i].field]
				tf += f.Weight * float64(tfs[i].count) / norm
				bits |= 1 << tfs[i].field
			}
			ix.postings[id] = append(ix.postings[id], posting{doc: int32(d), w: float32(tf / (opts.K1 + tf)), fields: bits})
		}
	}
	n := float64(len(docs))
	ix.idf = make([]float32, len(ix.terms))
	for id, ps := range ix.postings {
		df := float64(len(ps))
		ix.idf[id] = float32(math.Log(1 + (n-df+0.5)/(df+0.5)))
	}
	ix.maxIDF = math.Log(1 + (n-1+0.5)/(1+0.5))
	ix.sorted = make([]int32, len(ix.terms))
	for i := range ix.sorted {
		ix.sorted[i] = int32(i)
	}
	ix.masks = make([]uint64, len(ix.raw))
	for i, w := range ix.raw {
		ix.masks[i] = letterMask(w)
		for len(ix.byLen) <= len(w) {
			ix.byLen = append(ix.byLen, nil)
		}
		ix.byLen[len(w)] = append(ix.byLen[len(w)], int32(i))
	}
	slices.SortFunc(ix.sorted, func(a, b int32) int { return strings.Compare(ix.terms[a], ix.terms[b]) })
	if opts.Semantic > 0 {
		ix.embed()
		if opts.SoftMatch > 0 && ix.termVecs != nil {
			ix.buildNeighbourhood()
		}
	}
	ix.pool.New = func() any { return newAccum(len(docs)) }
	return ix
}

// intern analyses one field's text like Terms, interning each new term
// and recording each new raw word for typo lookups.
func (ix *Index) intern(text string, rawSeen map[string]bool) []int32 {
	var out []int32
	for _, w := range Words(text) {
		if utf8.RuneCountInString(w) < 2 || isStopWord(w) {
			continue
		}
		t := Stem(w)
		id, ok := ix.ids[t]
		if !ok {
			id = int32(len(ix.terms))
			ix.ids[t] = id
			ix.terms = append(ix.terms, t)
		}
		if !rawSeen[w] && len(w) <= maxTypoWord {
			rawSeen[w] = true
			ix.raw = append(ix.raw, w)
			ix.rawTerm = append(ix.rawTerm, id)
		}
		out = append(out, id)
	}
	return out
}

// maxTypoWord bounds the words typo lookups consider; longer ones are
// identifiers and hashes, not words anyone misspells.
const maxTypoWord = 24

// Len is the number of documents.
func (ix *Index) Len() int { return ix.n }

// alt is one indexed term a query word may mean.
type alt struct {
	term   int32
	weight float64
	via    Via
	// idfCap bounds the term's idf: a derived form must not weigh more
	// than the word itself because it is rarer.
	idfCap float32
}

// concept is one content word of a query with the terms it may mean.
type concept struct {
	word string
	stem string
	alts []alt
	// cover is the word's weight in coverage: its idf, or a fixed weight
	// for a word no document has.
	cover float64
	known bool
	// qualifier marks a known abbreviation no document uses ("ts" in
	// "ts code review"): it narrows the query but is not its subject.
	qualifier bool
}

// Query is an analysed query.
type Query struct {
	// Text is the query as given; Norm is it normalised (see Normalize),
	// and Padded is Norm between spaces, for whole-word containment.
	Text, Norm, Padded string
	// Words are the content words, stop words dropped.
	Words    []string
	concepts []concept
}

// Has reports whether the query contains the word w (lower case), stop
// words included.
func (q *Query) Has(w string) bool {
	i := strings.Index(q.Padded, w)
	for i >= 0 {
		if q.Padded[i-1] == ' ' && q.Padded[i+len(w)] == ' ' {
			return true
		}
		j := strings.Index(q.Padded[i+1:], w)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// derivational are the endings (of stems) that make a longer word a form
// of a shorter one; a query word reaches a longer indexed term only
// through one of them, so "out" never meets "output" and "test" never
// "testparseduration".
var derivational = map[string]bool{
	"ion": true, "ation": true, "ment": true, "er": true, "or": true, "al": true, "ship": true,
	"ionship": true, "ure": true, "ing": true, "ity": true, "iz": true, "is": true, "abl": true,
	"ibl": true, "anc": true, "enc": true, "ive": true, "li": true, "ness": true, "ur": true,
	"at": true, "ator": true, "e": true, "s": true, "es": true, "ed": true, "y": true, "ic": true,
	"ist": true, "ism": true, "ant": true, "ent": true, "ous": true, "ful": true, "less": true,
}

// unknownCover is the coverage weight of a word no document has, against
// the idf of a word found in one document: values such as names and
// places ("Denver", "Alice") should not sink an otherwise good match, but
// a query mostly of words nothing knows is not answered.
const unknownCover = 0.4

// fullCover is the coverage above which a match needs no evidence of rare
// words: a document that has every word of the query answers it, even in
// a library where every document has those words.
const fullCover = 0.9

// jargonCover is the coverage weight of a jargon word no document has.
const jargonCover = 0.15

// indexedMeaning scales the soft matches of a word the documents have.
const indexedMeaning = 0.7

// maxPrefixAlts bounds the derived terms one word reaches.
const maxPrefixAlts = 16

// Analyze turns a query into concepts and the terms each may mean.
func (ix *Index) Analyze(text string) *Query {
	q := &Query{Text: text, Norm: Normalize(text)}
	q.Padded = " " + q.Norm + " "
	seen := map[string]bool{}
	var all []string
	for _, w := range Words(text) {
		if utf8.RuneCountInString(w) < 2 {
			continue
		}
		all = append(all, w)
		if !isStopWord(w) {
			q.Words = append(q.Words, w)
		}
	}
	words := q.Words
	if len(words) == 0 {
		words = all // a query only of stop words is taken as it is
	}
	for _, w := range words {
		s := Stem(w)
		if seen[s] || len(q.concepts) == maxConcepts {
			continue
		}
		seen[s] = true
		q.concepts = append(q.concepts, ix.concept(w, s))
	}
	return q
}

func (ix *Index) concept(w, s string) concept {
	c := concept{word: w, stem: s}
	add := func(a alt) {
		if !slices.ContainsFunc(c.alts, func(b alt) bool { return b.term == a.term }) {
			c.alts = append(c.alts, a)
		}
	}
	exact, isExact := ix.ids[s]
	var idfCap float32
	if isExact {
		add(alt{term: exact, weight: 1, via: ViaExact})
		idfCap = ix.idf[exact]
	}
	if len(s) >= 4 {
		i, _ := slices.BinarySearchFunc(ix.sorted, s, func(id int32, k string) int { return strings.Compare(ix.terms[id], k) })
		var pre []int32
		for ; i < len(ix.sorted) && strings.HasPrefix(ix.terms[ix.sorted[i]], s); i++ {
			id := ix.sorted[i]
			rest := ix.terms[id][len(s):]
			// A word no document has may be cut short ("kubern",
			// "authent"); a known word reaches only its derived forms.
			if rest != "" && (derivational[rest] || !isExact) {
				pre = append(pre, id)
			}
		}
		if len(pre) > maxPrefixAlts {
			slices.SortFunc(pre, func(a, b int32) int { return len(ix.postings[b]) - len(ix.postings[a]) })
			pre = pre[:maxPrefixAlts]
		}
		for _, id := range pre {
			add(alt{term: id, weight: viaWeight[ViaPrefix], via: ViaPrefix, idfCap: idfCap})
		}
	}
	jargonHit := false
	// Plurals of abbreviations ("cves", "prs") escape the stemmer.
	for _, key := range []string{w, s, strings.TrimSuffix(w, "s")} {
		for _, phrase := range jargonTerms(key) {
			for _, t := range phrase {
				if id, ok := ix.ids[t]; ok && t != s {
					add(alt{term: id, weight: viaWeight[ViaJargon], via: ViaJargon})
					jargonHit = true
				}
			}
		}
	}
	if !isExact && !jargonHit {
		for _, id := range ix.typos(w) {
			add(alt{term: id, weight: viaWeight[ViaTypo], via: ViaTypo})
		}
	}
	for _, r := range related(s) {
		if id, ok := ix.ids[r]; ok {
			add(alt{term: id, weight: viaWeight[ViaLexicon], via: ViaLexicon})
		}
	}
	// Soft matching: the terms closest in meaning, the word or not.
	// A word the documents have reaches them more weakly: it has its own
	// matches, and its neighbours should reorder rather than flood them.
	if ix.near != nil {
		sw := viaWeight[ViaMeaning]
		if isExact {
			sw *= indexedMeaning
		}
		for _, n := range ix.neighbours(w, s) {
			add(alt{term: n.term, weight: sw * float64(n.cos), via: ViaMeaning, idfCap: idfCap})
		}
	}
	// A word's coverage weight is how specific it is: its own idf, else
	// that of what it was corrected to or cut from. What jargon expands
	// it to says less: "k8s" must not make "kubernetes" the subject of
	// "k8s rollback" in a library that mentions kubernetes once.
	jargonIDF := 0.0
	for _, a := range c.alts {
		switch a.via {
		case ViaPrefix, ViaTypo:
			c.known = true
			c.cover = max(c.cover, float64(ix.idf[a.term]))
		case ViaJargon:
			jargonIDF = max(jargonIDF, float64(ix.idf[a.term]))
		}
	}
	if isExact {
		c.known = true
		c.cover = float64(ix.idf[exact])
	} else if !c.known && jargonIDF > 0 {
		c.known = true
		c.cover = min(jargonIDF, unknownCover*ix.maxIDF)
	}
	if !c.known {
		c.cover = unknownCover * ix.maxIDF
		if len(jargon[w]) > 0 || len(jargon[s]) > 0 {
			// A known abbreviation the documents do not use ("ts",
			// "gql") qualifies the query rather than being its subject.
			c.cover = jargonCover * ix.maxIDF
			c.qualifier = true
		}
		if !strings.ContainsFunc(w, func(r rune) bool { return r < '0' || r > '9' }) {
			c.cover = 0 // a number says nothing about which document
		}
	}
	return c
}

// maxTypos bounds the corrections tried for one word.
const maxTypos = 3

// typos returns the terms a misspelt word probably means: the terms of
// indexed words within the length-aware edit limit, closest first, then
// the most common.
func (ix *Index) typos(s string) []int32 {
	limit := typoLimit(len(s))
	if limit == 0 {
		return nil
	}
	mask := letterMask(s)
	type cand struct {
		id   int32
		dist int
	}
	var cands []cand
	for l := len(s) - limit; l <= len(s)+limit; l++ {
		if l < 1 || l >= len(ix.byLen) {
			continue
		}
		for _, id := range ix.byLen[l] {
			if popcount(mask^ix.masks[id]) > 2*limit || (len(s) == 4 && (l != 4 || mask != ix.masks[id])) {
				continue
			}
			if d := editDistance(s, ix.raw[id], limit); d <= limit {
				cands = append(cands, cand{ix.rawTerm[id], d})
			}
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return len(ix.postings[b.id]) - len(ix.postings[a.id])
	})
	var out []int32
	for _, c := range cands {
		if len(out) == maxTypos || c.dist > cands[0].dist {
			break
		}
		if !slices.Contains(out, c.id) {
			out = append(out, c.id)
		}
	}
	return out
}

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
	totalCover := 0.0
	var unknown []string
	known, qualifiers := false, 0
	for _, c := range q.concepts {
		totalCover += c.cover
		if c.qualifier {
			qualifiers++
		}
		if c.known {
			known = true
		} else if c.cover > 0 {
			unknown = append(unknown, c.word)
		}
	}
	// Words met only in meaning are no indexed word: the reason says the
	// query's words are unknown, and the cosine note says how close.
	noWord := !known && !slices.ContainsFunc(q.concepts, func(c concept) bool {
		return slices.ContainsFunc(c.alts, func(a alt) bool { return a.via != ViaMeaning })
	})
	if noWord && ix.docVecs == nil {
		return Result{Abstained: true, Why: fmt.Sprintf("no indexed word matches %s", quoteList(unknown))}
	}
	a := ix.pool.Get().(*accum)
	defer func() { a.reset(); ix.pool.Put(a) }()
	specificDF := int(math.Max(3, ix.opts.SpecificShare*float64(ix.n)))
	var weakMask uint32
	for f, fl := range ix.opts.Fields {
		if fl.Weak {
			weakMask |= 1 << f
		}
	}
	for ci, c := range q.concepts {
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
		for _, d := range cur {
			if a.mask[d] == 0 {
				a.touched = append(a.touched, d)
			}
			al := c.alts[a.curAlt[d]]
			a.score[d] += a.cur[d]
			a.cover[d] += c.cover * al.weight
			if al.via != ViaLexicon && al.via != ViaMeaning && a.curFields[d]&^weakMask != 0 {
				a.evidence[d] += c.cover * al.weight
			}
			a.mask[d] |= 1 << ci
			a.fields[d] |= a.curFields[d]
			a.best[d][ci] = a.curAlt[d] + 1
			if al.via != ViaLexicon && al.via != ViaMeaning {
				// Two words of the query together are specific even
				// when each alone is common ("create directory").
				if len(ix.postings[al.term]) <= specificDF || a.nonLexicon[d] > 0 {
					a.specific[d] = true
				}
				a.nonLexicon[d]++
			}
			a.cur[d] = 0
		}
		a.curDocs = cur[:0]
	}
	full := uint32(1)<<len(q.concepts) - 1
	better := func(x, y cand) bool {
		if x.score != y.score {
			return x.score > y.score
		}
		if ix.opts.Tie != nil {
			if c := ix.opts.Tie(int(x.doc), int(y.doc)); c != 0 {
				return c < 0
			}
		}
		return x.doc < y.doc
	}
	top := make([]cand, 0, limit+1)
	push := func(c cand) {
		if len(top) == limit && !better(c, top[limit-1]) {
			return
		}
		// Skipped documents still count for confidence: a document a
		// caller's own tier already answers shows the query is answerable.
		// Asked only here, since few documents get this far.
		if skip != nil && skip(int(c.doc)) {
			return
		}
		i := len(top)
		top = append(top, c)
		for i > 0 && better(c, top[i-1]) {
			top[i] = top[i-1]
			i--
		}
		top[i] = c
		if len(top) > limit {
			top = top[:limit]
		}
	}
	var qv []float32
	if ix.docVecs != nil {
		qv = ix.queryVector(q)
	}
	lex := a.lex[:0]
	lexMax := 0.0
	bestCov, bestEv, anySpecific := 0.0, 0.0, false
	for _, d := range a.touched {
		if !a.specific[d] && len(q.concepts) > 1 {
			continue // only one common word of several matched
		}
		anySpecific = true
		isFull := a.mask[d] == full
		onlyWeak := a.fields[d]&^weakMask == 0
		if onlyWeak && !isFull {
			continue
		}
		cov := 1.0
		if totalCover > 0 {
			cov = min(a.cover[d]/totalCover, 1)
		}
		bestCov = max(bestCov, cov)
		bestEv = max(bestEv, a.evidence[d]/ix.maxIDF)
		sc := a.score[d] * coverageFactor(cov, ix.opts.CoverageExp) * float64(ix.boost[d])
		if onlyWeak {
			sc *= ix.opts.WeakOnly
		}
		if ix.opts.Adjust != nil {
			sc *= ix.opts.Adjust(int(d), q, Matched{Fields: a.fields[d], Full: isFull})
		}
		lexMax = max(lexMax, sc)
		lex = append(lex, cand{doc: d, score: sc, cov: cov, lx: sc})
	}
	a.lex = lex
	lexAbstain := len(lex) == 0 || bestCov < ix.opts.MinConfidence || (bestEv < ix.opts.MinEvidence && bestCov < fullCover && len(q.concepts)-qualifiers >= 3)
	bestSem := 0.0
	if qv == nil {
		for _, c := range lex {
			c.lx = 1
			if lexMax > 0 {
				c.lx = c.score / lexMax
			}
			push(c)
		}
	} else {
		// Fusion: the lexical score relative to the best one, plus the
		// weighted cosine; and every other document as close in meaning
		// as the floor asks joins on its cosine alone.
		w := ix.opts.Semantic
		for _, c := range lex {
			a.inLex[c.doc] = true
			c.lx = c.score / lexMax
			c.sm = float64(dot(qv, ix.docVec(c.doc)))
			c.score = c.lx + w*c.sm
			push(c)
		}
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
				push(cand{doc: d, score: w * sm, sm: sm})
			}
		}
		for _, c := range lex {
			a.inLex[c.doc] = false
		}
	}
	semanticAnswers := qv != nil && ix.opts.SemanticFloor > 0 && bestSem >= ix.opts.SemanticFloor
	if len(top) == 0 || (lexAbstain && !semanticAnswers) {
		r := Result{Abstained: true}
		switch {
		case noWord:
			r.Why = fmt.Sprintf("no indexed word matches %s", quoteList(unknown))
		case !anySpecific:
			r.Why = "only words too common to tell documents apart matched"
		case bestCov < ix.opts.MinConfidence:
			r.Why = fmt.Sprintf("the best match covers %d%% of the query, under the %d%% floor", int(bestCov*100), int(ix.opts.MinConfidence*100))
		default:
			r.Why = "the best match rests on too few distinctive words"
			if len(unknown) > 0 {
				r.Why += fmt.Sprintf("; nothing mentions %s", quoteList(unknown))
			}
		}
		if qv != nil && ix.opts.SemanticFloor > 0 {
			r.Why += fmt.Sprintf("; no document is close enough in meaning (%.2f, under %.2f)", bestSem, ix.opts.SemanticFloor)
		}
		return r
	}
	out := Result{Hits: make([]Hit, len(top))}
	for i, c := range top {
		h := Hit{Doc: int(c.doc), Score: c.score, Confidence: c.cov, Lexical: c.lx, Semantic: c.sm}
		if c.lx > 0 {
			h.Evidence = a.evidence[c.doc] / ix.maxIDF
			for ci, con := range q.concepts {
				bi := a.best[c.doc][ci]
				if bi == 0 {
					continue
				}
				al := con.alts[bi-1]
				h.Reasons = append(h.Reasons, Reason{Field: ix.fieldOf(al.term, c.doc), Word: con.word, Term: ix.terms[al.term], Via: al.via})
				if al.via.Expanded() {
					h.Expanded = true
				}
			}
		}
		out.Hits[i] = h
	}
	return out
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

// Standing is where one document stands for a query, for explaining why
// it is not among the results. Its rank is the caller's: only the caller
// knows the tiers and reranking around the engine's order.
type Standing struct {
	// Abstained is the search's reason when it returned nothing.
	Abstained string
	// Words are the query words the document holds (exactly or through a
	// derivation, typo, jargon or synonym).
	Words []string
	// Semantic is the cosine of the document's and the query's vectors,
	// and Join the cosine at which an unmatched document joins the
	// candidates for this query (1: never).
	Semantic, Join float64
}

// Stand explains where doc stands for a query. It ranks every document,
// so it is for explanations, not for serving searches.
func (ix *Index) Stand(text string, doc int) Standing {
	st := Standing{Join: ix.opts.SemanticJoin}
	if doc < 0 || doc >= ix.n {
		return st
	}
	q := ix.Analyze(text)
	res := ix.SearchQuery(q, ix.n, nil)
	st.Abstained = res.Why
	for _, c := range q.concepts {
		for _, al := range c.alts {
			if al.via == ViaMeaning {
				continue // close in meaning is not holding the word; Semantic says how close
			}
			ps := ix.postings[al.term]
			if _, ok := slices.BinarySearchFunc(ps, int32(doc), func(p posting, d int32) int { return int(p.doc - d) }); ok {
				st.Words = append(st.Words, c.word)
				break
			}
		}
	}
	if qv := ix.queryVector(q); qv != nil {
		st.Semantic = float64(dot(qv, ix.docVec(int32(doc))))
		best := 0.0
		for d := range int32(ix.n) {
			best = max(best, float64(dot(qv, ix.docVec(d))))
		}
		st.Join = max(st.Join, best-semanticMargin)
	}
	return st
}
