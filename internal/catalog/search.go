package catalog

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/sahilm/fuzzy"
)

// Search ranking, in tiers (DESIGN §6):
//
//  1. exact name: the query is the tool's name, the child's own name, or
//     its title;
//  2. name prefix: a one-word query the name (or the child's name) starts
//     with;
//  3. relevance: BM25 over weighted fields (name words, title, server,
//     description, parameter names), with the query's terms expanded by a
//     small table of developer synonyms and stemmed, scaled by how much of
//     the query a tool covers; a compact one-word query is also matched as
//     an abbreviation of the name (sahilm/fuzzy), for "gcpr" or "mkdir".
//
// When nothing matches the specific words of the query, Search abstains
// rather than padding the answer with tools that share one common word.

// Match is one search result.
type Match struct {
	Entry *Entry
	Score float64
	// Tier is 0 for an exact name, 1 for a name prefix, 2 for relevance.
	Tier int
}

// field weights: where a word appears says how much it is about the tool.
const (
	wName   = 3.0
	wTitle  = 2.0
	wServer = 1.5
	wDesc   = 1.0
	wParams = 0.5

	bm25K1 = 1.2
	bm25B  = 0.75
)

// index is the search index of one snapshot, built on first use.
type index struct {
	entries []*Entry
	docs    []doc
	// postings maps a term to the documents containing it.
	postings map[string][]int
	avgLen   [nFields]float64
	names    []string // lower-case names, for abbreviation matching
}

const (
	fName = iota
	fTitle
	fServer
	fDesc
	fParams
	nFields
)

var fieldWeight = [nFields]float64{wName, wTitle, wServer, wDesc, wParams}

type doc struct {
	tf      [nFields]map[string]int
	length  [nFields]int
	exact   []string // lower-case names the tool answers to exactly
	prefix  []string // lower-case names a one-word prefix may match
	allTerm map[string]bool
}

func (s *Snapshot) searchIndex() *index {
	s.indexOnce.Do(func() { s.index = buildIndex(s.Entries) })
	return s.index
}

func buildIndex(entries []*Entry) *index {
	ix := &index{entries: entries, docs: make([]doc, len(entries)), postings: map[string][]int{}, names: make([]string, len(entries))}
	var total [nFields]int
	for i, e := range entries {
		d := &ix.docs[i]
		d.allTerm = map[string]bool{}
		name := strings.ToLower(e.Name)
		ix.names[i] = name
		d.exact = []string{name}
		d.prefix = []string{name}
		words := e.Name
		if e.Original != "" {
			orig := strings.ToLower(e.Original)
			d.exact = append(d.exact, orig)
			d.prefix = append(d.prefix, orig)
			words = e.Original
		}
		if e.Tool.Title != "" {
			d.exact = append(d.exact, strings.ToLower(e.Tool.Title))
		}
		texts := [nFields]string{
			fName:   words,
			fTitle:  e.Tool.Title,
			fServer: e.Server,
			fDesc:   e.Tool.Description,
			fParams: paramText(e.Tool.InputSchema),
		}
		for f, text := range texts {
			terms := analyze(text)
			d.tf[f] = map[string]int{}
			for _, t := range terms {
				d.tf[f][t]++
				if !d.allTerm[t] {
					d.allTerm[t] = true
					ix.postings[t] = append(ix.postings[t], i)
				}
			}
			d.length[f] = len(terms)
			total[f] += len(terms)
		}
	}
	for f := range nFields {
		if len(entries) > 0 {
			ix.avgLen[f] = math.Max(1, float64(total[f])/float64(len(entries)))
		}
	}
	return ix
}

// paramText is the names and descriptions of a schema's top-level
// properties.
func paramText(schema any) string {
	m, _ := schema.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	var b strings.Builder
	for name, p := range props {
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
		}
	}
	return b.String()
}

// Search ranks the snapshot's tools for a query and returns at most limit
// matches, best first; nil when nothing matches specifically.
func (s *Snapshot) Search(query string, limit int) []Match {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" || limit <= 0 {
		return nil
	}
	ix := s.searchIndex()
	best := map[int]Match{}
	consider := func(i int, m Match) {
		old, ok := best[i]
		if !ok || m.Tier < old.Tier || (m.Tier == old.Tier && m.Score > old.Score) {
			best[i] = m
		}
	}

	compact := strings.Join(strings.Fields(q), "_")
	for i, d := range ix.docs {
		for _, n := range d.exact {
			if n == q || n == compact {
				consider(i, Match{Entry: ix.entries[i], Tier: 0, Score: 1000})
			}
		}
		if len(compact) >= 3 && !strings.Contains(q, " ") {
			for _, n := range d.prefix {
				if strings.HasPrefix(n, compact) {
					consider(i, Match{Entry: ix.entries[i], Tier: 1, Score: 500 - float64(len(n)-len(compact))})
				}
			}
		}
	}

	for i, score := range ix.relevance(q) {
		consider(i, Match{Entry: ix.entries[i], Tier: 2, Score: score})
	}
	for i, score := range ix.abbreviations(q) {
		consider(i, Match{Entry: ix.entries[i], Tier: 2, Score: score})
	}

	// Ties keep catalog order, so results are deterministic.
	order := make([]int, 0, len(best))
	for i := range best {
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int) int {
		ma, mb := best[a], best[b]
		return cmp.Or(cmp.Compare(ma.Tier, mb.Tier), cmp.Compare(mb.Score, ma.Score), cmp.Compare(a, b))
	})
	out := make([]Match, 0, min(len(order), limit))
	for _, i := range order {
		if ix.entries[i].Quarantine == "" && len(out) < limit {
			out = append(out, best[i])
		}
	}
	return out
}

// synonymWeight discounts a match on a synonym against the typed word.
const synonymWeight = 0.7

// minCoverage is the share of a query's concepts a tool must match to be
// a relevance result; below it a tool only shares a stray word.
const minCoverage = 0.5

// relevance scores tools by BM25 over the weighted fields. Each query word
// is a concept that any of its synonyms satisfies; the score is scaled by
// the share of concepts a tool covers.
func (ix *index) relevance(q string) map[int]float64 {
	concepts := expand(q)
	if len(concepts) == 0 {
		return nil
	}
	n := float64(len(ix.docs))
	scores := map[int]float64{}
	covered := map[int]int{}
	for _, alts := range concepts {
		// The best-scoring word counts once per concept; a synonym counts
		// for less than the word the user typed.
		conceptScore := map[int]float64{}
		for k, term := range alts {
			weight := 1.0
			if k > 0 {
				weight = synonymWeight
			}
			post := ix.postings[term]
			if len(post) == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(len(post))+0.5)/(float64(len(post))+0.5))
			for _, i := range post {
				d := &ix.docs[i]
				var tf float64
				for f := range nFields {
					if c := d.tf[f][term]; c > 0 {
						norm := 1 - bm25B + bm25B*float64(d.length[f])/ix.avgLen[f]
						tf += fieldWeight[f] * float64(c) / norm
					}
				}
				s := weight * idf * tf * (bm25K1 + 1) / (tf + bm25K1)
				conceptScore[i] = math.Max(conceptScore[i], s)
			}
		}
		for i, s := range conceptScore {
			scores[i] += s
			covered[i]++
		}
	}
	for i, s := range scores {
		coverage := float64(covered[i]) / float64(len(concepts))
		if coverage < minCoverage {
			delete(scores, i)
			continue
		}
		scores[i] = s * coverage * coverage
	}
	return scores
}

// abbreviations matches a compact one-word query as a subsequence of tool
// names ("gcpr" in github_create_pull_request), scored by sahilm/fuzzy,
// which rewards matches at word starts.
func (ix *index) abbreviations(q string) map[int]float64 {
	if strings.ContainsAny(q, " \t") || len(q) < 2 || len(q) > 16 {
		return nil
	}
	var cand []int
	for i, name := range ix.names {
		if isSubsequence(q, name) {
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 {
		return nil
	}
	names := make([]string, len(cand))
	for j, i := range cand {
		names[j] = ix.names[i]
	}
	out := map[int]float64{}
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
		out[cand[m.Index]] = 1 + float64(m.Score)/10
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

// analyze splits text into lower-case, stemmed terms without stop words.
// snake_case, kebab-case and camelCase words are split too.
func analyze(text string) []string {
	var out []string
	for _, w := range splitWords(text) {
		if stopWords[w] {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

func splitWords(text string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	runes := []rune(text)
	for i, r := range runes {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			// A lower-to-upper change starts a camelCase word.
			if unicode.IsUpper(r) && i > 0 && unicode.IsLower(runes[i-1]) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return words
}

// stem strips the common English suffixes, enough for "files"/"file",
// "listing"/"list", "created"/"create" to meet.
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		return trimDouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		return trimDouble(w[:len(w)-2])
	case strings.HasSuffix(w, "es") && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes")):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}

// trimDouble undoes a doubled final consonant ("running" → "run") and
// restores a dropped "e" for common stems ("creat" → "create").
func trimDouble(w string) string {
	n := len(w)
	if n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
		return w[:n-1]
	}
	if restoreE[w] {
		return w + "e"
	}
	return w
}

var restoreE = map[string]bool{
	"creat": true, "updat": true, "delet": true, "writ": true, "sav": true, "remov": true,
	"mov": true, "stor": true, "releas": true, "resolv": true, "describ": true, "execut": true,
	"manag": true, "configur": true, "clos": true, "merg": true, "pars": true,
	"compar": true, "chang": true, "generat": true, "analyz": true, "sampl": true,
}

var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"can": true, "do": true, "for": true, "from": true, "how": true, "i": true, "in": true, "into": true,
	"is": true, "it": true, "its": true, "me": true, "my": true, "of": true, "on": true, "or": true,
	"our": true, "please": true, "should": true, "so": true, "some": true, "that": true, "the": true,
	"their": true, "them": true, "then": true, "there": true, "this": true, "to": true, "up": true,
	"us": true, "was": true, "we": true, "what": true, "when": true, "where": true, "which": true,
	"who": true, "will": true, "with": true, "would": true, "you": true, "your": true, "want": true,
	"need": true, "let": true, "lets": true, "just": true, "any": true, "all": true, "one": true,
	"tool": true, "tools": true, "using": true, "use": true, "via": true, "about": true, "could": true,
}

// synonyms maps a word developers type to the words tools describe the
// same thing with. Both sides are stemmed when used.
var synonyms = map[string][]string{
	"read":       {"get", "view", "open", "show", "content", "fetch", "load"},
	"open":       {"read", "view", "navigate"},
	"view":       {"read", "show", "get", "display"},
	"show":       {"get", "list", "view", "display", "read"},
	"see":        {"get", "list", "view", "read"},
	"get":        {"read", "fetch", "retrieve"},
	"fetch":      {"get", "download", "retrieve", "read"},
	"download":   {"fetch", "get"},
	"write":      {"create", "save", "put", "overwrite"},
	"save":       {"write", "store", "create"},
	"store":      {"save", "write", "persist"},
	"create":     {"make", "add", "new", "write"},
	"make":       {"create"},
	"add":        {"create", "insert", "append"},
	"new":        {"create"},
	"edit":       {"modify", "update", "change", "replace"},
	"modify":     {"edit", "update", "change"},
	"change":     {"edit", "update", "modify"},
	"update":     {"edit", "modify", "change"},
	"delete":     {"remove", "erase"},
	"remove":     {"delete"},
	"rm":         {"delete", "remove"},
	"erase":      {"delete", "remove"},
	"list":       {"enumerate", "show", "all"},
	"ls":         {"list", "directory"},
	"enumerate":  {"list"},
	"find":       {"search", "locate", "lookup", "query"},
	"search":     {"find", "query", "lookup"},
	"lookup":     {"search", "find", "get"},
	"look":       {"search", "find"},
	"grep":       {"search", "find", "pattern"},
	"query":      {"search", "sql", "find"},
	"move":       {"rename", "mv"},
	"mv":         {"move", "rename"},
	"rename":     {"move"},
	"copy":       {"duplicate", "cp"},
	"folder":     {"directory", "dir"},
	"dir":        {"directory", "folder"},
	"directory":  {"folder", "dir"},
	"mkdir":      {"create", "directory"},
	"file":       {"document"},
	"doc":        {"document", "documentation", "docs"},
	"docs":       {"documentation", "document"},
	"repo":       {"repository"},
	"repos":      {"repository"},
	"pr":         {"pull", "request"},
	"prs":        {"pull", "request"},
	"mr":         {"merge", "request"},
	"issue":      {"ticket", "bug"},
	"ticket":     {"issue"},
	"bug":        {"issue"},
	"gh":         {"github"},
	"k8s":        {"kubernetes"},
	"kube":       {"kubernetes"},
	"db":         {"database"},
	"sql":        {"query", "database"},
	"run":        {"execute", "start", "launch"},
	"execute":    {"run"},
	"start":      {"launch", "run", "begin", "spawn"},
	"launch":     {"start", "spawn", "run"},
	"spawn":      {"start", "launch"},
	"stop":       {"kill", "terminate", "end", "release"},
	"kill":       {"stop", "terminate"},
	"screenshot": {"capture", "image", "snapshot"},
	"picture":    {"image"},
	"image":      {"picture", "screenshot"},
	"click":      {"press", "tap"},
	"type":       {"fill", "enter", "input"},
	"browser":    {"page", "navigate", "web"},
	"website":    {"page", "url", "web"},
	"url":        {"link", "address", "page"},
	"web":        {"page", "browser", "url"},
	"message":    {"send", "post", "chat"},
	"send":       {"post", "message"},
	"post":       {"send", "publish"},
	"note":       {"memory", "observation"},
	"remember":   {"memory", "store", "save"},
	"recall":     {"memory", "search", "retrieve"},
	"memory":     {"remember", "recall"},
	"lock":       {"claim", "acquire", "exclusive"},
	"unlock":     {"release", "claim"},
	"claim":      {"lock", "acquire"},
	"status":     {"health", "state"},
	"health":     {"status", "state"},
	"schema":     {"definition", "describe"},
	"info":       {"information", "metadata", "detail"},
	"metadata":   {"info", "information"},
	"size":       {"info", "metadata"},
	"tree":       {"hierarchy", "recursive", "directory"},
	"cpu":        {"processor", "system", "usage"},
	"ram":        {"memory", "system"},
	"email":      {"mail", "message"},
	"map":        {"location", "geocode", "directions"},
	"weather":    {"forecast"},
	"think":      {"thought", "reason"},
	"reason":     {"think", "thought"},
	"plan":       {"think", "step"},
	"commit":     {"commits", "history"},
	"history":    {"commits", "log"},
	"branch":     {"branches"},
	"pdf":        {"document"},
	"skill":      {"workflow", "skills"},
	"workflow":   {"skill"},
	"speak":      {"speech", "voice", "tts"},
	"talk":       {"speech", "voice"},
	"transcribe": {"speech", "text"},
}

// expand turns a query into concepts: each non-stop word with its stemmed
// synonyms.
func expand(q string) [][]string {
	var out [][]string
	seen := map[string]bool{}
	for _, w := range splitWords(q) {
		if stopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		alts := []string{stem(w)}
		for _, syn := range synonyms[w] {
			for _, part := range splitWords(syn) {
				if s := stem(part); !slices.Contains(alts, s) {
					alts = append(alts, s)
				}
			}
		}
		out = append(out, alts)
	}
	return out
}
