package skills

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/sahilm/fuzzy"
)

// Tier says which rule found a match. Lower tiers always rank first.
type Tier int

// Tiers, in rank order.
const (
	// TierAlias: the whole query is the skill's name, file name or one of
	// its aliases.
	TierAlias Tier = iota + 1
	// TierPrefix: the skill's name starts with the whole query.
	TierPrefix
	// TierRelevance: weighted lexical relevance over the fields.
	TierRelevance
)

// Match is one search result.
type Match struct {
	Skill *Skill
	Tier  Tier
	// Score orders matches within TierRelevance; higher is better.
	Score float64
	// Reasons say why the skill matched, at most three.
	Reasons []string
	// Expanded is true when the match needed query expansion.
	Expanded bool
}

// Weights of the ways a query word can meet an indexed term.
const (
	weightExact   = 1.0
	weightPrefix  = 0.75
	weightTypo    = 0.6
	weightSynonym = 0.55
	// maxQueryTerms bounds the words of a query that are matched.
	maxQueryTerms = 16
	// prefixFanout bounds the terms one query word may expand to.
	prefixFanout = 48
)

// how a query word met a term.
type how uint8

const (
	viaExact how = iota
	viaPrefix
	viaTypo
	viaSynonym
)

type hit struct {
	term   int32
	weight float64
	via    how
	word   string // the query word
	// idfCap, when set, bounds the term's idf: a prefix match must not
	// weigh more than the word itself because the longer term is rare
	// ("test" → "testparseduration").
	idfCap float32
}

// accum is the per-query scratch space, pooled: dense arrays over the
// skills.
type accum struct {
	score   []float64
	cur     []float64
	curHit  []int32 // hit index per doc for the current word
	curF    []uint16
	mask    []uint32
	fields  []uint16
	touched []int32
	curDocs []int32 // docs the current word reached
	seen    []bool
	best    [][maxQueryTerms]int32 // per doc and word: index into hits+1
}

var accumPool sync.Pool

func getAccum(n int) *accum {
	if a, _ := accumPool.Get().(*accum); a != nil && len(a.score) == n {
		return a
	}
	return &accum{
		score: make([]float64, n), cur: make([]float64, n), curHit: make([]int32, n), curF: make([]uint16, n),
		mask: make([]uint32, n), fields: make([]uint16, n), seen: make([]bool, n),
		best: make([][maxQueryTerms]int32, n),
	}
}

func (a *accum) reset() {
	for _, d := range a.touched {
		a.score[d], a.mask[d], a.fields[d], a.seen[d] = 0, 0, 0, false
		a.best[d] = [maxQueryTerms]int32{}
	}
	a.touched = a.touched[:0]
}

// Search ranks the skills for a query, best first, at most limit of them.
//
// Tiers are concatenated in order, each skill once: alias-exact, then
// name-prefix, then relevance. Relevance is BM25F over the fields with
// the weights of fieldWeight; each query word (stop words dropped) meets
// indexed terms exactly, by stem, as a prefix, or through sahilm/fuzzy and
// one edit over the terms of the short fields when it meets nothing else.
// A skill's score is scaled by the square of the share of query words it
// matches. When no skill matches every word, the query is expanded with
// synonyms. Finally the rerank favours root skills that read as
// procedures over deep reference material.
func (ix *Index) Search(query string, limit int) []Match {
	if limit <= 0 || len(ix.Skills) == 0 {
		return nil
	}
	q := normalize(query)
	if q == "" {
		return nil
	}
	var out []Match
	taken := map[*Skill]bool{}
	push := func(m Match) {
		if !taken[m.Skill] && len(out) < limit {
			taken[m.Skill] = true
			out = append(out, m)
		}
	}
	for _, s := range ix.exact[q] {
		push(Match{Skill: s, Tier: TierAlias, Reasons: []string{"alias exact: " + q}})
	}
	if len(q) >= 2 {
		var prefixed []*Skill
		for i, n := range ix.lex.normName {
			if strings.HasPrefix(n, q) && !taken[ix.Skills[i]] {
				prefixed = append(prefixed, ix.Skills[i])
			}
		}
		slices.SortFunc(prefixed, func(a, b *Skill) int {
			return cmp.Or(cmp.Compare(a.Depth, b.Depth), cmp.Compare(len(a.Name), len(b.Name)), cmp.Compare(a.Name, b.Name))
		})
		for _, s := range prefixed {
			push(Match{Skill: s, Tier: TierPrefix, Score: 0, Reasons: []string{"name prefix: " + s.Name}})
		}
	}
	if len(out) < limit {
		for _, m := range ix.relevance(q, query, limit-len(out), taken) {
			push(m)
		}
	}
	return out
}

// relevance is tier 3.
func (ix *Index) relevance(q, query string, limit int, skip map[*Skill]bool) []Match {
	lx := ix.lex
	content, raw := queryTokens(query)
	if len(content) > maxQueryTerms {
		content, raw = content[:maxQueryTerms], raw[:maxQueryTerms]
	}
	if len(content) == 0 {
		return nil
	}
	hits := make([][]hit, len(content))
	for i, t := range content {
		hits[i] = lx.lookup(t, raw[i])
	}
	a := getAccum(lx.n)
	defer func() { a.reset(); accumPool.Put(a) }()
	fullMask := uint32(1)<<len(content) - 1
	ix.score(a, hits)
	expanded := false
	if !a.anyFull(fullMask) {
		// Nothing matches the whole query: add synonyms and score again.
		grew := false
		for i := range content {
			for _, syn := range expand(raw[i]) {
				for _, h := range lx.lookup(syn, syn) {
					if h.via == viaExact || h.via == viaPrefix {
						h.weight *= weightSynonym
						h.via = viaSynonym
						h.word = raw[i]
						hits[i] = append(hits[i], h)
						grew = true
					}
				}
			}
		}
		if grew {
			a.reset()
			ix.score(a, hits)
			expanded = true
		}
	}

	// Coverage weighs each query word by how specific it is (its idf):
	// missing "build" costs less than missing "bisect".
	wordW := make([]float64, len(content))
	total := 0.0
	maxIDF := float64(lx.maxIDF())
	for i := range content {
		wordW[i] = maxIDF
		best := 0.0
		for _, h := range hits[i] {
			if h.via != viaSynonym {
				best = max(best, float64(lx.idf[h.term]))
			}
		}
		if best > 0 {
			wordW[i] = best
		}
		total += wordW[i]
	}
	padded := " " + q + " "
	type cand struct {
		doc   int32
		score float64
	}
	better := func(x, y cand) bool {
		if x.score != y.score {
			return x.score > y.score
		}
		sx, sy := ix.Skills[x.doc], ix.Skills[y.doc]
		return cmp.Or(cmp.Compare(sx.Depth, sy.Depth), cmp.Compare(sx.Name, sy.Name), cmp.Compare(sx.Key, sy.Key)) < 0
	}
	// top keeps the best limit candidates, best first.
	top := make([]cand, 0, limit+1)
	for _, d := range a.touched {
		s := ix.Skills[d]
		if len(skip) > 0 && skip[s] {
			continue
		}
		// A partial match must come from more than the body: a long
		// text mentions almost anything once.
		if a.mask[d] != fullMask && a.fields[d]&^(1<<fBody) == 0 {
			continue
		}
		covered := 0.0
		for i := range content {
			if a.mask[d]&(1<<i) != 0 {
				covered += wordW[i]
			}
		}
		cov := covered / total
		sc := a.score[d] * cov * cov
		// Phrase bonuses, cheapest tests first: most candidates fail the
		// length checks.
		full := a.mask[d] == fullMask
		inName, inDesc := a.fields[d]&(1<<fName) != 0, a.fields[d]&(1<<fDescription) != 0
		switch {
		case inName && full && len(content) > 1 && len(lx.normName[d]) >= len(q) && strings.Contains(lx.normName[d], q):
			sc *= 1.5 // the query is part of the name
		case inName && len(lx.paddedName[d]) <= len(padded) && strings.Contains(padded, lx.paddedName[d]):
			sc *= 1.5 // the name is part of the query
		case inDesc && full && len(content) > 1 && len(lx.normDesc[d]) >= len(q) && strings.Contains(lx.normDesc[d], q):
			sc *= 1.2
		}
		sc *= s.boost
		c := cand{d, sc}
		if len(top) == limit && !better(c, top[limit-1]) {
			continue
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
	out := make([]Match, len(top))
	for i, c := range top {
		m := Match{Skill: ix.Skills[c.doc], Tier: TierRelevance, Score: c.score, Expanded: expanded}
		m.Reasons = ix.reasons(a, c.doc, hits)
		out[i] = m
	}
	return out
}

// score accumulates BM25F per skill: for each query word the best of its
// hits, summed over words; a bit per matched word in mask.
func (ix *Index) score(a *accum, hits [][]hit) {
	lx := ix.lex
	cur := a.curDocs[:0]
	defer func() { a.curDocs = cur[:0] }()
	for w, hs := range hits {
		cur = cur[:0]
		for hi, h := range hs {
			idf := float64(lx.idf[h.term])
			if h.idfCap > 0 {
				idf = min(idf, float64(h.idfCap))
			}
			for _, p := range lx.postings[h.term] {
				v := idf * float64(p.w) * h.weight
				d := p.doc
				if a.cur[d] == 0 {
					cur = append(cur, d)
				}
				if v > a.cur[d] {
					a.cur[d] = v
					a.curHit[d] = int32(hi)
					a.curF[d] = p.fields
				}
			}
		}
		for _, d := range cur {
			if !a.seen[d] {
				a.seen[d] = true
				a.touched = append(a.touched, d)
			}
			a.score[d] += a.cur[d]
			a.mask[d] |= 1 << w
			a.fields[d] |= a.curF[d]
			a.best[d][w] = a.curHit[d] + 1
			a.cur[d] = 0
		}
	}
}

func (a *accum) anyFull(full uint32) bool {
	for _, d := range a.touched {
		if a.mask[d] == full {
			return true
		}
	}
	return false
}

// posting finds one skill's posting of a term.
func (lx *lexicon) posting(term, doc int32) (posting, bool) {
	ps := lx.postings[term]
	i, ok := slices.BinarySearchFunc(ps, doc, func(p posting, d int32) int { return int(p.doc - d) })
	if !ok {
		return posting{}, false
	}
	return ps[i], true
}

// lookup finds the indexed terms a query word meets: the word itself (its
// stem), terms it is a prefix of, and, only when neither exists, terms of
// the short fields it is a subsequence of or one edit away from.
func (lx *lexicon) lookup(t, raw string) []hit {
	var out []hit
	var idfCap float32
	if id, ok := lx.termID(t); ok {
		out = append(out, hit{term: id, weight: weightExact, via: viaExact, word: raw})
		idfCap = lx.idf[id]
	}
	if len(t) >= 3 {
		for _, id := range lx.prefixed(t, prefixFanout) {
			out = append(out, hit{term: id, weight: weightPrefix, via: viaPrefix, word: raw, idfCap: idfCap})
		}
	}
	if len(out) > 0 || len(t) < 4 {
		return out
	}
	for _, term := range lx.typos(t) {
		id, _ := lx.termID(term)
		out = append(out, hit{term: id, weight: weightTypo, via: viaTypo, word: raw})
	}
	return out
}

// typos returns up to three short-field terms a misspelt word probably
// means: terms one edit away (Damerau-Levenshtein), then terms the word
// is a close subsequence of (sahilm/fuzzy: dropped letters).
func (lx *lexicon) typos(t string) []string {
	var edits, subseq []string
	need := letterMask(t)
	for i, term := range lx.short {
		if d := len(term) - len(t); d < -1 || d > 3 {
			continue
		}
		if len(term) == len(t)+1 || len(term) == len(t) || len(term) == len(t)-1 {
			if withinOneEdit(t, term) {
				edits = append(edits, term)
				continue
			}
		}
		if lx.shortMask[i]&need == need {
			subseq = append(subseq, term)
		}
	}
	out := edits
	if len(subseq) > 0 && len(out) < 3 {
		for _, m := range fuzzy.Find(t, subseq) {
			if len(out) == 3 {
				break
			}
			out = append(out, m.Str)
		}
	}
	if len(out) > 3 {
		out = out[:3]
	}
	return out
}

// withinOneEdit reports whether a and b differ by at most one insertion,
// deletion, substitution or swap of neighbours.
func withinOneEdit(a, b string) bool {
	if a == b {
		return true
	}
	la, lb := len(a), len(b)
	if la > lb {
		a, b, la, lb = b, a, lb, la
	}
	if lb-la > 1 {
		return false
	}
	i := 0
	for i < la && a[i] == b[i] {
		i++
	}
	if la == lb {
		if a[i+1:] == b[i+1:] {
			return true // substitution
		}
		return i+1 < la && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:] // swap
	}
	return a[i:] == b[i+1:] // insertion
}

// reasons explain a relevance match: for each query word, the most
// important field its best hit was found in.
func (ix *Index) reasons(a *accum, doc int32, hits [][]hit) []string {
	s := ix.Skills[doc]
	var out []string
	add := func(r string) {
		if len(out) < 3 && !contains(out, r) {
			out = append(out, r)
		}
	}
	order := []field{fName, fAliases, fTags, fHints, fPath, fDescription, fMeta, fBody}
	for w := range hits {
		bi := a.best[doc][w]
		if bi == 0 {
			continue
		}
		h := hits[w][bi-1]
		p, _ := ix.lex.posting(h.term, doc)
		for _, f := range order {
			if p.fields&(1<<f) == 0 {
				continue
			}
			r := fieldReason(s, f, ix.lex.vocabTerm(h.term))
			switch h.via {
			case viaTypo:
				r += fmt.Sprintf(" (typo: %s → %s)", h.word, matchedWord(skillFields(s)[f], ix.lex.vocabTerm(h.term)))
			case viaSynonym:
				r += fmt.Sprintf(" (expanded: %s → %s)", h.word, matchedWord(skillFields(s)[f], ix.lex.vocabTerm(h.term)))
			}
			add(r)
			break
		}
	}
	if len(out) == 0 {
		out = append(out, "description: "+s.Description)
	}
	return out
}

// vocabTerm returns the text of a term id.
func (lx *lexicon) vocabTerm(id int32) string { return lx.byID[id] }

// fieldReason renders "<field>: <value>" for the value of f that holds
// term.
func fieldReason(s *Skill, f field, term string) string {
	pick := func(values []string) string {
		for _, v := range values {
			for _, t := range terms(v) {
				if strings.HasPrefix(t, term) {
					return v
				}
			}
		}
		if len(values) > 0 {
			return values[0]
		}
		return term
	}
	switch f {
	case fName:
		return "name: " + s.Name
	case fAliases:
		return "alias: " + pick(s.Aliases)
	case fTags:
		return "tag: " + pick(s.Tags)
	case fHints:
		h := pick(s.Hints)
		if len(h) > 60 {
			h = h[:57] + "..."
		}
		return "hint: " + h
	case fPath:
		return "category: " + s.Where()
	}
	return fieldNames[f] + ": " + matchedWord(skillFields(s)[f], term)
}

// matchedWord finds the word of text whose stem starts with term.
func matchedWord(text, term string) string {
	for _, w := range words(text) {
		if strings.HasPrefix(stem(w), term) {
			return w
		}
	}
	return term
}

// rerankFactor is the rerank: actionable root skills over deep reference
// leaves. Each level below the category costs a little; supporting
// material (references, examples) costs more; a skill with steps or code
// to run gains a little.
func rerankFactor(s *Skill) float64 {
	f := 1 / (1 + 0.12*float64(s.Depth))
	if s.Depth == 0 {
		f *= 1.1
	}
	if s.referenceLeaf() {
		f *= 0.8
	}
	if s.actionable() {
		f *= 1.05
	}
	return f
}
