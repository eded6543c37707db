package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/sahilm/fuzzy"

	"github.com/evokore/evokore/internal/search"
)

// Search ranking, in tiers (DESIGN §6):
//
//  1. exact name: the query is the tool's name, the child's own name, or
//     its title;
//  2. name prefix: a one-word query the name (or the child's name) starts
//     with;
//  3. relevance: the shared engine (internal/search) over the fields
//     below, plus a compact one-word query matched as an abbreviation of
//     the name (sahilm/fuzzy), for "gcpr" or "mkdir".
//
// When nothing passes the engine's confidence floor, Search abstains
// rather than padding the answer with tools that share one common word,
// and Find says why.

// Match is one search result.
type Match struct {
	Entry *Entry
	Score float64
	// Tier is 0 for an exact name, 1 for a name prefix, 2 for relevance.
	Tier int
	// Abbreviation is true when the query matched as an abbreviation of
	// the name, scored among the relevance matches (tier 2): no query
	// word need be in the tool.
	Abbreviation bool
	// Reasons say why the tool matched ("name: read (typo: raed)").
	Reasons []string
	// Lexical and Semantic are the relevance signals (search.Hit): the
	// lexical score relative to the best, and the cosine in meaning.
	Lexical, Semantic float64
	// Coverage is the share of the query's words the tool has as
	// written (search.Hit's Confidence): 1 when it has every one.
	Coverage float64
}

// Found is a search's answer: the matches, and when there are none, why.
type Found struct {
	Matches []Match
	// Why explains an empty answer; "" when there are matches.
	Why string
}

// fullCoverage is the Coverage of a tool that has every word of the
// query as written (a float sum of idf shares, so not exactly 1).
const fullCoverage = 0.999

// Weak reports whether the answer is one a tool not yet in the catalog
// could beat: nothing matched, or no match is an exact name or a name
// prefix and none has every word of the query as written (what is left
// matched through expansions, typos, meaning or part of the query).
func (f Found) Weak() bool {
	for _, m := range f.Matches {
		if m.Tier < 2 || m.Coverage >= fullCoverage {
			return false
		}
	}
	return true
}

// The fields of a tool and their weights: where a word appears says how
// much it is about the tool. Parameter text is weak: names and
// descriptions of arguments mention almost anything.
const (
	fName = iota
	fTitle
	fServer
	fDesc
	fParams
)

var toolFields = []search.Field{
	fName:   {Name: "name", Weight: 3, B: 0.3},
	fTitle:  {Name: "title", Weight: 2, B: 0.3},
	fServer: {Name: "server", Weight: 1.5, B: 0},
	fDesc:   {Name: "description", Weight: 1, B: 0.75},
	fParams: {Name: "parameters", Weight: 0.5, B: 0.75},
}

// Calibrated on the evaluation sets in testdata/retrieval (see the README
// there): a score is scaled by the square root of the coverage, and the
// best tool must cover at least minConfidence of the query's weighted
// words and about minEvidence rare words, or discover_tools abstains.
var (
	toolK1        = 1.5
	coverageExp   = 0.5
	minConfidence = 0.3
	minEvidence   = 0.8
	// semanticWeight, semanticFloor and semanticJoin fuse offline
	// semantic similarity (internal/search, vectors.go). TestTuneSemantic
	// swept the weight and the join on queries.json and
	// queries_extra.json only; the floor, the cosine at which meaning
	// answers when the lexical floors abstain, was set, not swept.
	// queries_heldout.json judges them.
	semanticWeight = 0.5
	semanticFloor  = 0.8
	semanticJoin   = 0.6
	// softMatch is the cosine at which a query word meets a tool's word
	// close in meaning (search.ViaMeaning), tuned the same way.
	softMatch = 0.6
)

// index is the search index of one snapshot, built on first use.
type index struct {
	entries []*Entry
	engine  *search.Index
	// exact maps the lower-case names and titles a tool answers to.
	exact map[string][]int32
	// prefixes are the lower-case names (prefixed and the child's own),
	// sorted, for one-word prefix queries.
	prefixes []prefixKey
	names    []string // lower-case names, for abbreviation matching
}

type prefixKey struct {
	key string
	doc int32
}

func (s *Snapshot) searchIndex() *index {
	s.indexOnce.Do(func() { s.index = buildIndex(s.Entries) })
	return s.index
}

func buildIndex(entries []*Entry) *index {
	ix := &index{entries: entries, exact: map[string][]int32{}, names: make([]string, len(entries))}
	docs := make([]search.Doc, len(entries))
	for i, e := range entries {
		doc := int32(i)
		name := strings.ToLower(e.Name)
		ix.names[i] = name
		ix.exact[name] = append(ix.exact[name], doc)
		ix.prefixes = append(ix.prefixes, prefixKey{name, doc})
		words := e.Name
		if e.Original != "" {
			orig := strings.ToLower(e.Original)
			ix.exact[orig] = append(ix.exact[orig], doc)
			ix.prefixes = append(ix.prefixes, prefixKey{orig, doc})
			words = e.Original
		}
		if e.Tool.Title != "" {
			title := strings.ToLower(e.Tool.Title)
			ix.exact[title] = append(ix.exact[title], doc)
		}
		docs[i] = search.Doc{Fields: []string{
			fName:   words,
			fTitle:  e.Tool.Title,
			fServer: e.Server,
			fDesc:   e.Tool.Description,
			fParams: paramText(e.Tool.InputSchema),
		}}
	}
	slices.SortFunc(ix.prefixes, func(a, b prefixKey) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.doc, b.doc)) })
	ix.engine = search.Build(search.Options{
		Fields:        toolFields,
		K1:            toolK1,
		CoverageExp:   coverageExp,
		MinConfidence: minConfidence,
		MinEvidence:   minEvidence,
		Semantic:      semanticWeight,
		SemanticFloor: semanticFloor,
		SemanticJoin:  semanticJoin,
		SoftMatch:     softMatch,
	}, docs)
	return ix
}

// paramText is the names and descriptions of a schema's top-level
// properties.
func paramText(schema any) string {
	m, _ := schema.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	var b strings.Builder
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range props {
			if !yield(k) {
				return
			}
		}
	}) {
		p := props[name]
		if name == ApprovalTokenField {
			continue
		}
		b.WriteString(name)
		b.WriteByte(' ')
		if pm, ok := p.(map[string]any); ok {
			if d, ok := pm["description"].(string); ok {
				b.WriteString(d)
				b.WriteByte(' ')
			}
			// Enumerated values are words of the tool too ("open",
			// "closed", "merged").
			if enum, ok := pm["enum"].([]any); ok {
				for _, v := range enum {
					if str, ok := v.(string); ok {
						b.WriteString(str)
						b.WriteByte(' ')
					}
				}
			}
		}
	}
	return b.String()
}

// Search ranks the snapshot's tools for a query and returns at most limit
// matches, best first; nil when nothing matches well enough.
func (s *Snapshot) Search(query string, limit int) []Match {
	return s.Find(query, limit).Matches
}

// Find is Search with the reason for an empty answer.
func (s *Snapshot) Find(query string, limit int) Found {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" || limit <= 0 {
		return Found{Why: "the query is empty"}
	}
	ix := s.searchIndex()
	named := map[int32]candidate{}
	consider := func(c candidate) {
		old, ok := named[c.doc]
		if !ok || c.tier < old.tier || (c.tier == old.tier && c.score > old.score) {
			named[c.doc] = c
		}
	}
	compact := strings.Join(strings.Fields(q), "_")
	for _, key := range []string{q, compact} {
		for _, i := range ix.exact[key] {
			consider(candidate{doc: i, tier: 0, score: 1000, reason: "exact name: " + ix.entries[i].Name})
		}
	}
	if len(compact) >= 3 && !strings.Contains(q, " ") {
		from, _ := slices.BinarySearchFunc(ix.prefixes, compact, func(p prefixKey, k string) int { return cmp.Compare(p.key, k) })
		for _, p := range ix.prefixes[from:] {
			if !strings.HasPrefix(p.key, compact) {
				break
			}
			consider(candidate{doc: p.doc, tier: 1, score: 500 - float64(len(p.key)-len(compact)), reason: "name prefix: " + ix.entries[p.doc].Name})
		}
	}
	for _, c := range ix.abbreviations(q) {
		consider(c)
	}
	quarantined := func(d int) bool { return ix.entries[d].Quarantine != "" }
	res := ix.engine.Search(query, limit+len(named), quarantined)
	var cands []candidate
	for _, h := range res.Hits {
		c := candidate{doc: int32(h.Doc), tier: 2, score: h.Score, reasons: toolReasons(h), lexical: h.Lexical, semantic: h.Semantic, coverage: h.Confidence}
		if n, ok := named[c.doc]; ok {
			if n.tier < c.tier || n.score > c.score {
				n.reasons = append([]string{n.reason}, c.reasons...)
				n.lexical, n.semantic, n.coverage = c.lexical, c.semantic, c.coverage
				c = n
			}
			delete(named, c.doc)
		}
		cands = append(cands, c)
	}
	for _, c := range named {
		if !quarantined(int(c.doc)) {
			c.reasons = []string{c.reason}
			cands = append(cands, c)
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		if a.better(b) {
			return -1
		}
		if b.better(a) {
			return 1
		}
		return 0
	})
	if len(cands) > limit {
		cands = cands[:limit]
	}
	if len(cands) == 0 {
		return Found{Why: res.Why}
	}
	out := make([]Match, len(cands))
	for i, c := range cands {
		out[i] = Match{Entry: ix.entries[c.doc], Tier: c.tier, Abbreviation: c.abbreviation, Score: c.score, Reasons: c.reasons, Lexical: c.lexical, Semantic: c.semantic, Coverage: c.coverage}
	}
	return Found{Matches: out}
}

// toolReasons renders the engine's reasons: "<field>: <word>", with how a
// word that is not the query's own was reached.
func toolReasons(h search.Hit) []string {
	out := make([]string, 0, len(h.Reasons))
	for _, r := range h.Reasons {
		out = append(out, fmt.Sprintf("%s: %s%s", toolFields[r.Field].Name, r.Word, ViaNote(r)))
	}
	return out
}

// ViaNote is how a reason's word reached the term, for reasons texts: ""
// for the word itself.
func ViaNote(r search.Reason) string {
	switch r.Via {
	case search.ViaPrefix:
		return " (derived: " + r.Term + ")"
	case search.ViaTypo:
		return " (typo: " + r.Word + " → " + r.Term + ")"
	case search.ViaJargon, search.ViaLexicon:
		return " (expanded: " + r.Word + " → " + r.Term + ")"
	case search.ViaMeaning:
		return " (close in meaning: " + r.Word + " → " + r.Term + ")"
	}
	return ""
}

// candidate is a tool a query matched, before ranking.
type candidate struct {
	doc     int32
	tier    int
	score   float64
	reason  string
	reasons []string
	// abbreviation: the query matched as an abbreviation of the name.
	abbreviation bool
	// lexical, semantic and coverage are the engine's signals for a
	// relevance match.
	lexical, semantic, coverage float64
}

// better orders candidates: lower tier, then higher score, then catalog
// order.
func (c candidate) better(o candidate) bool {
	if c.tier != o.tier {
		return c.tier < o.tier
	}
	if c.score != o.score {
		return c.score > o.score
	}
	return c.doc < o.doc
}

// abbreviationTop is the score of a query's best abbreviation guess, the
// others scaled by their fuzzy score against it. It is on the engine's
// fused scale (lexical share 0..1 plus half the cosine) and under a
// tool that holds the query word itself (lexical 1): "pr" is
// github_get_pull_request (jargon pr → pull) before pdf_read_pdf_bytes,
// and "gcpr", which no word matches, still finds
// github_create_pull_request.
const abbreviationTop = 0.9

// maxAbbreviationCandidates bounds the names an abbreviation is scored
// against; a pattern that many names contain says nothing specific.
const maxAbbreviationCandidates = 500

// abbreviations matches a compact one-word query as a subsequence of tool
// names ("gcpr" in github_create_pull_request), scored by sahilm/fuzzy,
// which rewards matches at word starts.
func (ix *index) abbreviations(q string) []candidate {
	if strings.ContainsAny(q, " \t") || len(q) < 2 || len(q) > 16 {
		return nil
	}
	var cand []int32
	for i, name := range ix.names {
		if isSubsequence(q, name) {
			cand = append(cand, int32(i))
		}
	}
	if len(cand) > maxAbbreviationCandidates || len(cand) == 0 {
		return nil
	}
	names := make([]string, len(cand))
	for j, i := range cand {
		names[j] = ix.names[i]
	}
	var out []candidate
	best := 0
	for _, m := range fuzzy.Find(q, names) {
		// Only abbreviation-shaped matches: most matched letters start a
		// word of the name.
		starts := 0
		for _, p := range m.MatchedIndexes {
			if p == 0 || m.Str[p-1] == '_' || m.Str[p-1] == '-' {
				starts++
			}
		}
		if starts*2 < len(m.MatchedIndexes) {
			continue
		}
		best = max(best, m.Score, 1)
		score := abbreviationTop * float64(max(m.Score, 1)) / float64(best)
		out = append(out, candidate{doc: cand[m.Index], tier: 2, abbreviation: true, score: score, reason: "abbreviation: " + q})
	}
	return out
}

func isSubsequence(q, s string) bool {
	i := 0
	for j := 0; j < len(s) && i < len(q); j++ {
		if s[j] == q[i] {
			i++
		}
	}
	return i == len(q)
}
