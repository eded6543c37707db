package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/evokore/evokore/internal/search"
)

// Signals renders how a match scored, for discover_tools' explain and
// `evokore vet --explain`: its tier (an abbreviation of the name is named
// as such, though it ranks with relevance), then for a relevance match
// the lexical score (relative to the best), the cosine in meaning and the
// fused score, then the reasons.
func (m Match) Signals() string {
	var b strings.Builder
	switch m.Tier {
	case 0:
		b.WriteString("tier exact name")
	case 1:
		b.WriteString("tier name prefix")
	default:
		tier := "relevance"
		if m.Abbreviation {
			tier = "abbreviation (ranked with relevance)"
		}
		// An abbreviation holds no query word by design; it did not join
		// on meaning.
		b.WriteString(search.Relevance(tier, m.Lexical, m.Semantic, m.Score, m.Lexical == 0 && !m.Abbreviation))
	}
	if len(m.Reasons) > 0 {
		b.WriteString("; matched " + strings.Join(m.Reasons, ", "))
	}
	return b.String()
}

// WhyNot says why the tool named name is not among the first limit
// results for query, or where it is: not in the catalog, held by pinning,
// ranked below the limit, or not matched (with the query words it holds
// and how close it is in meaning). ranked is every match in the order the
// caller shows them (a reranker's order, say); nil is Find's. Who may see
// or call it (profile, role) and whether its server is ready are the
// router's to add.
func (s *Snapshot) WhyNot(query, name string, limit int, ranked []Match) string {
	e, ok := s.Lookup(name)
	if !ok {
		return fmt.Sprintf("no tool named %q is in the catalog", name)
	}
	if e.Quarantine != "" {
		return fmt.Sprintf("held by tool pinning (%s): search never returns it until an operator accepts it with `evokore pins`", e.Quarantine)
	}
	if ranked == nil {
		ranked = s.Find(query, len(s.Entries)).Matches
	}
	// The rank comes from the same list as the results, exact names,
	// prefixes and abbreviations included, so it is the place the tool
	// would have had.
	for i, m := range ranked {
		if m.Entry != e {
			continue
		}
		if i < limit {
			return fmt.Sprintf("it is result %d (%s)", i+1, m.Signals())
		}
		return fmt.Sprintf("ranked %d, below the limit of %d (%s)", i+1, limit, m.Signals())
	}
	ix := s.searchIndex()
	doc := slices.Index(ix.entries, e)
	st := ix.engine.Stand(query, doc)
	meaning := fmt.Sprintf("its meaning is %.2f close to the query's", st.Semantic)
	switch {
	case st.Abstained != "":
		return "the search abstained: " + st.Abstained
	case len(st.Words) == 0:
		return fmt.Sprintf("not matched: no word of the query (nor a typo, derivation or synonym of one) is in its name, title, server, description or parameters, and %s, under the %.2f at which an unmatched tool joins", meaning, st.Join)
	}
	return fmt.Sprintf("not matched: it holds only %s, too common or only in its parameters to count for a query of more words, and %s", quote(st.Words), meaning)
}

func quote(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = "'" + w + "'"
	}
	return strings.Join(q, ", ")
}
