package skills

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/evokore/evokore/internal/search"
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
	// Expanded is true when the match needed query expansion (jargon or
	// WordNet).
	Expanded bool
	// Lexical and Semantic are the relevance signals (search.Hit): the
	// lexical score relative to the best, and the cosine in meaning.
	Lexical, Semantic float64
}

// field is a part of a skill the search weighs on its own.
type field uint8

const (
	fName field = iota
	fDescription
	fAliases
	fTags
	fHints
	fPath // category, subcategory, declared category, derived aliases
	fMeta // summaries and metadata
	fBody
	numFields
)

// skillFields order the fields as the design asks: name > description >
// aliases > tags > hints > path > metadata > body, with BM25 length
// normalisation none for the short fields and full for the body. The body
// is weak: a long text mentions almost anything once.
var skillFields = []search.Field{
	fName:        {Name: "name", Weight: 6, B: 0.3},
	fDescription: {Name: "description", Weight: 3.5, B: 0.5},
	fAliases:     {Name: "aliases", Weight: 3, B: 0.3},
	fTags:        {Name: "tags", Weight: 2.5, B: 0.3},
	fHints:       {Name: "hints", Weight: 2, B: 0.5},
	fPath:        {Name: "category", Weight: 1.2, B: 0.2},
	fMeta:        {Name: "metadata", Weight: 1, B: 0.6},
	fBody:        {Name: "body", Weight: 0.5, B: 0.75, Weak: true},
}

// Calibrated on testdata/retrieval (see retrieval_test.go): the square
// of the coverage scales a score, and the best skill must cover
// minConfidence of the query's weighted words and about minEvidence rare
// words, or the search abstains.
var (
	skillK1          = 2.0
	skillCoverageExp = 2.0
	minConfidence    = 0.45
	minEvidence      = 0.5
	// semanticWeight, semanticFloor and semanticJoin fuse offline
	// semantic similarity (internal/search, vectors.go). TestTuneSemantic
	// swept the weight and the join on queries.json only; the floor, the
	// cosine at which meaning answers when the lexical floors abstain,
	// was set, not swept. queries_heldout.json judges them.
	semanticWeight = 0.5
	semanticFloor  = 0.8
	semanticJoin   = 0.6
	// softMatch is the cosine at which a query word meets a skill's word
	// close in meaning (search.ViaMeaning), tuned the same way: 0.65
	// here, 0.6 for tools (MRR 0.894 against 0.888 on queries.json).
	softMatch = 0.65
)

func fieldTexts(s *Skill) []string {
	f := make([]string, numFields)
	f[fName] = s.Name
	f[fDescription] = s.Description
	f[fAliases] = strings.Join(s.Aliases, " ")
	f[fTags] = strings.Join(s.Tags, " ")
	f[fHints] = strings.Join(s.Hints, " ")
	f[fPath] = strings.Join(append([]string{s.Category, s.Subcategory, s.DeclaredCategory}, s.Derived...), " ")
	f[fMeta] = strings.Join(s.Summaries, " ") + " " + s.MetadataText
	f[fBody] = s.Body
	return f
}

// lexicon is the relevance index of a library and what phrase bonuses
// compare against.
type lexicon struct {
	engine     *search.Index
	normName   []string
	normDesc   []string
	paddedName []string // " " + normName + " ", for whole-word containment
	// panel and refLeaf mark supporting material, fixed at indexing: the
	// adjustment runs once per matched skill.
	panel, refLeaf []bool
}

func buildLexicon(skills []*Skill) *lexicon {
	lx := &lexicon{normName: make([]string, len(skills)), normDesc: make([]string, len(skills)), paddedName: make([]string, len(skills)),
		panel: make([]bool, len(skills)), refLeaf: make([]bool, len(skills))}
	docs := make([]search.Doc, len(skills))
	for i, s := range skills {
		lx.normName[i] = normalize(s.Name)
		lx.paddedName[i] = " " + lx.normName[i] + " "
		lx.normDesc[i] = normalize(s.Description)
		lx.panel[i], lx.refLeaf[i] = s.panel(), s.referenceLeaf()
		docs[i] = search.Doc{Fields: fieldTexts(s), Boost: s.boost}
	}
	lx.engine = search.Build(search.Options{
		Fields:        skillFields,
		K1:            skillK1,
		CoverageExp:   skillCoverageExp,
		MinConfidence: minConfidence,
		MinEvidence:   minEvidence,
		Semantic:      semanticWeight,
		SemanticFloor: semanticFloor,
		SemanticJoin:  semanticJoin,
		SoftMatch:     softMatch,
		Tie: func(a, b int) int {
			sa, sb := skills[a], skills[b]
			return cmp.Or(cmp.Compare(sa.Depth, sb.Depth), cmp.Compare(sa.Name, sb.Name), cmp.Compare(sa.Key, sb.Key))
		},
		Adjust: func(d int, q *search.Query, m search.Matched) float64 {
			return lx.adjust(d, q, m)
		},
	}, docs)
	return lx
}

// adjust is the skills' own rank rule on top of relevance: phrase
// bonuses, and supporting material (reference leaves, expert-panel
// documents) below the skills that do the work unless the query asks
// for that material.
func (lx *lexicon) adjust(d int, q *search.Query, m search.Matched) float64 {
	f := 1.0
	inName, inDesc := m.Fields&(1<<fName) != 0, m.Fields&(1<<fDescription) != 0
	switch {
	case inName && m.Full && len(q.Words) > 1 && strings.Contains(lx.normName[d], q.Norm):
		f = 1.5 // the query is part of the name
	case inName && len(lx.paddedName[d]) <= len(q.Padded) && strings.Contains(q.Padded, lx.paddedName[d]):
		f = 1.5 // the name is part of the query
	case inDesc && m.Full && len(q.Words) > 1 && strings.Contains(lx.normDesc[d], q.Norm):
		f = 1.2
	}
	if lx.panel[d] && !q.Has("panel") && !q.Has("panels") && !q.Has("expert") && !q.Has("experts") {
		f *= panelFactor
	}
	if lx.refLeaf[d] && namesMaterial(q) {
		f /= referenceFactor // asked for: no penalty
	}
	return f
}

// namesMaterial reports whether a query asks for supporting material.
func namesMaterial(q *search.Query) bool {
	for _, w := range []string{"reference", "references", "template", "templates", "example", "examples", "checklist", "appendix"} {
		if q.Has(w) {
			return true
		}
	}
	return false
}

// Search ranks the skills for a query, best first, at most limit of them.
//
// Tiers are concatenated in order, each skill once: alias-exact, then
// name-prefix, then relevance (internal/search over the fields of
// skillFields, with the adjustments of adjust and the rank factor of
// rerankFactor). Relevance abstains when no skill covers enough of the
// query; Find says why.
func (ix *Index) Search(query string, limit int) []Match {
	return ix.Find(query, limit).Matches
}

// Found is a search's answer: the matches, and when there are none, why.
type Found struct {
	Matches []Match
	// Why explains an empty answer.
	Why string
}

// Find is Search with the reason for an empty answer.
func (ix *Index) Find(query string, limit int) Found {
	if limit <= 0 || len(ix.Skills) == 0 {
		return Found{Why: "the library is empty"}
	}
	q := normalize(query)
	if q == "" {
		return Found{Why: "the query has no words"}
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
		for i, n := range ix.lex().normName {
			if strings.HasPrefix(n, q) && !taken[ix.Skills[i]] {
				prefixed = append(prefixed, ix.Skills[i])
			}
		}
		slices.SortFunc(prefixed, func(a, b *Skill) int {
			return cmp.Or(cmp.Compare(a.Depth, b.Depth), cmp.Compare(len(a.Name), len(b.Name)), cmp.Compare(a.Name, b.Name))
		})
		for _, s := range prefixed {
			push(Match{Skill: s, Tier: TierPrefix, Reasons: []string{"name prefix: " + s.Name}})
		}
	}
	why := ""
	if len(out) < limit {
		res := ix.lex().engine.Search(query, limit-len(out), func(d int) bool { return taken[ix.Skills[d]] })
		for _, h := range res.Hits {
			s := ix.Skills[h.Doc]
			push(Match{Skill: s, Tier: TierRelevance, Score: h.Score, Expanded: h.Expanded, Reasons: reasons(s, h), Lexical: h.Lexical, Semantic: h.Semantic})
		}
		why = res.Why
	}
	if len(out) == 0 {
		return Found{Why: why}
	}
	return Found{Matches: out}
}

// reasons explain a relevance match: for each query word, the most
// important field its best term was found in, at most three.
func reasons(s *Skill, h search.Hit) []string {
	var out []string
	texts := fieldTexts(s)
	for _, r := range h.Reasons {
		if len(out) == 3 {
			break
		}
		f := field(r.Field)
		text := fieldReason(s, f, r.Term)
		switch r.Via {
		case search.ViaTypo:
			text += fmt.Sprintf(" (typo: %s → %s)", r.Word, matchedWord(texts[f], r.Term))
		case search.ViaJargon, search.ViaLexicon:
			text += fmt.Sprintf(" (expanded: %s → %s)", r.Word, matchedWord(texts[f], r.Term))
		case search.ViaMeaning:
			text += fmt.Sprintf(" (close in meaning: %s → %s)", r.Word, matchedWord(texts[f], r.Term))
		}
		if !slices.Contains(out, text) {
			out = append(out, text)
		}
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("meaning: %.2f similar", h.Semantic))
	}
	return out
}

// fieldReason renders "<field>: <value>" for the value of f that holds
// term.
func fieldReason(s *Skill, f field, term string) string {
	pick := func(values []string) string {
		for _, v := range values {
			if slices.Contains(search.Terms(v), term) {
				return v
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
	return skillFields[f].Name + ": " + matchedWord(fieldTexts(s)[f], term)
}

// matchedWord finds the word of text whose stem is term.
func matchedWord(text, term string) string {
	for _, w := range search.Words(text) {
		if search.Stem(w) == term {
			return w
		}
	}
	return term
}

// Rank factors of supporting material.
const (
	// referenceFactor: a reference leaf (references/, templates/ ...)
	// against a skill that does the work.
	referenceFactor = 0.8
	// panelFactor: an expert-panel document (panel-*), unless the query
	// asks for a panel.
	panelFactor = 0.7
)

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
		f *= referenceFactor
	}
	if s.actionable() {
		f *= 1.05
	}
	return f
}
