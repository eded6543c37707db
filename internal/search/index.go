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
	// weakMask has bit f set for each weak field f; specificDF is the
	// most documents a term may occur in and still be specific.
	weakMask   uint32
	specificDF int
}

// maxConcepts bounds the words of a query that are matched.
const maxConcepts = 16

// Build indexes docs.
func Build(opts Options, docs []Doc) *Index {
	opts = opts.withDefaults()
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
	for f, fl := range opts.Fields {
		if fl.Weak {
			ix.weakMask |= 1 << f
		}
	}
	ix.specificDF = int(math.Max(3, opts.SpecificShare*float64(ix.n)))
	ix.pool.New = func() any { return newAccum(len(docs)) }
	return ix
}

// withDefaults fills the options left zero with their documented values.
func (opts Options) withDefaults() Options {
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
	return opts
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

// concept gathers what the word w (stem s) may mean among the indexed
// terms, strongest first: the stem itself, its derived forms, jargon,
// typo corrections when nothing else knows it, WordNet relations, then
// the terms close in meaning; and weighs it for coverage.
func (ix *Index) concept(w, s string) concept {
	c := concept{word: w, stem: s}
	exact, isExact := ix.ids[s]
	var idfCap float32
	if isExact {
		c.add(alt{term: exact, weight: 1, via: ViaExact})
		idfCap = ix.idf[exact]
	}
	for _, id := range ix.derived(s, isExact) {
		c.add(alt{term: id, weight: viaWeight[ViaPrefix], via: ViaPrefix, idfCap: idfCap})
	}
	expansions := ix.expansions(w, s)
	for _, id := range expansions {
		c.add(alt{term: id, weight: viaWeight[ViaJargon], via: ViaJargon})
	}
	if !isExact && len(expansions) == 0 {
		for _, id := range ix.typos(w) {
			c.add(alt{term: id, weight: viaWeight[ViaTypo], via: ViaTypo})
		}
	}
	for _, r := range related(s) {
		if id, ok := ix.ids[r]; ok {
			c.add(alt{term: id, weight: viaWeight[ViaLexicon], via: ViaLexicon})
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
			c.add(alt{term: n.term, weight: sw * float64(n.cos), via: ViaMeaning, idfCap: idfCap})
		}
	}
	ix.weighConcept(&c, exact, isExact)
	return c
}

// add appends a unless the concept already reaches its term.
func (c *concept) add(a alt) {
	if !slices.ContainsFunc(c.alts, func(b alt) bool { return b.term == a.term }) {
		c.alts = append(c.alts, a)
	}
}

// derived returns the indexed terms the stem s begins (four letters or
// more), the most common first when there are more than maxPrefixAlts.
// A known word reaches only its derived forms; a word no document has may
// be cut short ("kubern", "authent") and reaches any longer term.
func (ix *Index) derived(s string, isExact bool) []int32 {
	if len(s) < 4 {
		return nil
	}
	i, _ := slices.BinarySearchFunc(ix.sorted, s, func(id int32, k string) int { return strings.Compare(ix.terms[id], k) })
	var pre []int32
	for ; i < len(ix.sorted) && strings.HasPrefix(ix.terms[ix.sorted[i]], s); i++ {
		id := ix.sorted[i]
		rest := ix.terms[id][len(s):]
		if rest != "" && (derivational[rest] || !isExact) {
			pre = append(pre, id)
		}
	}
	if len(pre) > maxPrefixAlts {
		slices.SortFunc(pre, func(a, b int32) int { return len(ix.postings[b]) - len(ix.postings[a]) })
		pre = pre[:maxPrefixAlts]
	}
	return pre
}

// expansions returns the indexed terms the jargon table expands the
// word w (stem s) to, other than the stem, in table order and once per
// time the table names them.
func (ix *Index) expansions(w, s string) []int32 {
	var out []int32
	// Plurals of abbreviations ("cves", "prs") escape the stemmer.
	for _, key := range []string{w, s, strings.TrimSuffix(w, "s")} {
		for _, phrase := range jargonTerms(key) {
			for _, t := range phrase {
				if id, ok := ix.ids[t]; ok && t != s {
					out = append(out, id)
				}
			}
		}
	}
	return out
}

// weighConcept sets a concept's coverage weight from its alternatives:
// how specific the word is, its own idf, else that of what it was
// corrected to or cut from. What jargon expands it to says less: "k8s"
// must not make "kubernetes" the subject of "k8s rollback" in a library
// that mentions kubernetes once. A word nothing knows weighs a fixed
// share of the rarest word's idf, a known abbreviation no document uses
// less and marks a qualifier, and a number nothing.
func (ix *Index) weighConcept(c *concept, exact int32, isExact bool) {
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
	if c.known {
		return
	}
	c.cover = unknownCover * ix.maxIDF
	if len(jargon[c.word]) > 0 || len(jargon[c.stem]) > 0 {
		// A known abbreviation the documents do not use ("ts",
		// "gql") qualifies the query rather than being its subject.
		c.cover = jargonCover * ix.maxIDF
		c.qualifier = true
	}
	if !strings.ContainsFunc(c.word, func(r rune) bool { return r < '0' || r > '9' }) {
		c.cover = 0 // a number says nothing about which document
	}
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
