package catalog

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
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

	bm25K1 = 1.5
	bm25B  = 0.75
	// coverageBlend is how much the share of the query a tool covers
	// scales its score.
	coverageBlend = 0.5
)

// index is the search index of one snapshot, built on first use. Every
// posting carries its tool's field-weighted, length-normalised term
// frequency (the BM25F pseudo-frequency), so a query only sums numbers.
type index struct {
	entries []*Entry
	// postings maps a term to the tools containing it.
	postings map[string][]posting
	// exact maps the lower-case names and titles a tool answers to.
	exact map[string][]int32
	// prefixes are the lower-case names (prefixed and the child's own),
	// sorted, for one-word prefix queries.
	prefixes []prefixKey
	names    []string // lower-case names, for abbreviation matching

	vocabOnce sync.Once
	// vocab holds every indexed word by length, for typo matching, and
	// sortedVocab all of them in order, for prefix matching.
	vocab       map[int][]string
	sortedVocab []string

	accumulators sync.Pool // *accumulator sized for entries
}

// accumulator is the per-query scratch space of relevance scoring.
type accumulator struct {
	total, conceptBest []float64
	covered            []uint8
	specific           []bool
	touched, inConcept []int32
}

type posting struct {
	doc int32
	tf  float32
}

type prefixKey struct {
	key string
	doc int32
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

func (s *Snapshot) searchIndex() *index {
	s.indexOnce.Do(func() { s.index = buildIndex(s.Entries) })
	return s.index
}

func buildIndex(entries []*Entry) *index {
	ix := &index{entries: entries, postings: map[string][]posting{}, exact: map[string][]int32{}, names: make([]string, len(entries))}
	ix.accumulators.New = func() any {
		n := len(entries)
		return &accumulator{total: make([]float64, n), conceptBest: make([]float64, n), covered: make([]uint8, n), specific: make([]bool, n)}
	}
	type fieldCounts struct {
		terms  map[string]int
		length int
	}
	counts := make([][nFields]fieldCounts, len(entries))
	var total [nFields]int
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
		texts := [nFields]string{
			fName:   words,
			fTitle:  e.Tool.Title,
			fServer: e.Server,
			fDesc:   e.Tool.Description,
			fParams: paramText(e.Tool.InputSchema),
		}
		for f, text := range texts {
			terms := analyze(text)
			fc := fieldCounts{terms: make(map[string]int, len(terms)), length: len(terms)}
			for _, t := range terms {
				fc.terms[t]++
			}
			counts[i][f] = fc
			total[f] += len(terms)
		}
	}
	slices.SortFunc(ix.prefixes, func(a, b prefixKey) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.doc, b.doc)) })
	var avgLen [nFields]float64
	for f := range nFields {
		avgLen[f] = 1
		if len(entries) > 0 {
			avgLen[f] = math.Max(1, float64(total[f])/float64(len(entries)))
		}
	}
	for i := range entries {
		tf := map[string]float64{}
		for f := range nFields {
			fc := counts[i][f]
			norm := 1 - bm25B + bm25B*float64(fc.length)/avgLen[f]
			for t, c := range fc.terms {
				tf[t] += fieldWeight[f] * float64(c) / norm
			}
		}
		for t, w := range tf {
			ix.postings[t] = append(ix.postings[t], posting{int32(i), float32(w)})
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
// matches, best first; nil when nothing matches specifically.
func (s *Snapshot) Search(query string, limit int) []Match {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" || limit <= 0 {
		return nil
	}
	ix := s.searchIndex()
	// Exact and prefix hits are few; relevance hits may be thousands and
	// are merged below without map lookups in the sort.
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
			consider(candidate{i, 0, 1000})
		}
	}
	if len(compact) >= 3 && !strings.Contains(q, " ") {
		from, _ := slices.BinarySearchFunc(ix.prefixes, compact, func(p prefixKey, k string) int { return cmp.Compare(p.key, k) })
		for _, p := range ix.prefixes[from:] {
			if !strings.HasPrefix(p.key, compact) {
				break
			}
			consider(candidate{p.doc, 1, 500 - float64(len(p.key)-len(compact))})
		}
	}
	for _, c := range ix.abbreviations(q) {
		consider(c)
	}
	cands := ix.relevance(q)
	for i, c := range cands {
		if n, ok := named[c.doc]; ok {
			if n.tier < c.tier || n.score > c.score {
				cands[i] = n
			}
			delete(named, c.doc)
		}
	}
	for _, c := range named {
		cands = append(cands, c)
	}
	// Keep the best limit in order (ties in catalog order, so results are
	// deterministic) without sorting the thousands a broad query matches.
	top := make([]candidate, 0, limit)
	for _, c := range cands {
		if len(top) == limit && !c.better(top[limit-1]) {
			continue
		}
		if ix.entries[c.doc].Quarantine != "" {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, c, func(t, c candidate) int {
			if c.better(t) {
				return 1
			}
			return -1
		})
		top = slices.Insert(top, i, c)
		if len(top) > limit {
			top = top[:limit]
		}
	}
	out := make([]Match, len(top))
	for i, c := range top {
		out[i] = Match{Entry: ix.entries[c.doc], Tier: c.tier, Score: c.score}
	}
	return out
}

// candidate is a tool a query matched, before ranking.
type candidate struct {
	doc   int32
	tier  int
	score float64
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

// synonymWeight discounts a match on a synonym against the typed word.
const synonymWeight = 0.85

// specificShare is the largest share of the catalog a word may describe
// and still be specific: a tool that matches only words more common than
// this ("file", "get", "list") is not a match on its own.
const specificShare = 0.12

// relevance scores tools by BM25F over the weighted fields. Each query word
// is a concept that any of its synonyms satisfies, scored by its best
// word. Concepts no tool mentions (names, numbers, values such as "Alice"
// or "8080") say nothing about which tool to use and are left out; of the
// rest, the share a tool covers scales its score. A tool must match at
// least one specific concept, so one common word never makes a match.
func (ix *index) relevance(q string) []candidate {
	n := float64(len(ix.entries))
	type concept struct {
		alts     []string // alts[0] is the typed word; "" where no tool has it
		specific bool
	}
	var concepts []concept
	for _, alts := range expand(q) {
		if len(ix.postings[alts[0]]) == 0 && len(alts[0]) >= 5 {
			// A word no tool uses may be a typo of one that some do.
			alts = append(alts, ix.nearWords(alts[0])...)
		}
		if len(alts[0]) >= 4 {
			// "config" also means "configuration", "auth" "authenticate".
			alts = append(alts, ix.longerWords(alts[0])...)
		}
		c := concept{alts: make([]string, len(alts))}
		known := false
		for k, term := range alts {
			if df := len(ix.postings[term]); df > 0 {
				c.alts[k], known = term, true
				if float64(df) <= math.Max(3, specificShare*n) {
					c.specific = true
				}
			}
		}
		if known {
			concepts = append(concepts, c)
		}
	}
	if len(concepts) == 0 {
		return nil
	}
	// Dense accumulators, indexed by tool and reused across queries;
	// touched lists what to read back and clear.
	acc := ix.accumulators.Get().(*accumulator)
	defer ix.accumulators.Put(acc)
	total, conceptBest, covered, specific := acc.total, acc.conceptBest, acc.covered, acc.specific
	touched, inConcept := acc.touched[:0], acc.inConcept[:0]
	defer func() {
		for _, d := range touched {
			total[d], covered[d], specific[d] = 0, 0, false
		}
		acc.touched, acc.inConcept = touched[:0], inConcept[:0]
	}()
	for _, c := range concepts {
		inConcept = inConcept[:0]
		for k, term := range c.alts {
			if term == "" {
				continue
			}
			weight := 1.0
			if k > 0 {
				weight = synonymWeight
			}
			post := ix.postings[term]
			idf := math.Log(1 + (n-float64(len(post))+0.5)/(float64(len(post))+0.5))
			for _, p := range post {
				tf := float64(p.tf)
				sc := weight * idf * tf * (bm25K1 + 1) / (tf + bm25K1)
				if conceptBest[p.doc] == 0 {
					inConcept = append(inConcept, p.doc)
				}
				conceptBest[p.doc] = math.Max(conceptBest[p.doc], sc)
			}
		}
		// The best-scoring word counts once per concept.
		for _, d := range inConcept {
			if total[d] == 0 {
				touched = append(touched, d)
			}
			total[d] += conceptBest[d]
			conceptBest[d] = 0
			covered[d]++
			if c.specific {
				specific[d] = true
			}
		}
	}
	out := make([]candidate, 0, len(touched))
	for _, d := range touched {
		if !specific[d] {
			continue
		}
		coverage := float64(covered[d]) / float64(len(concepts))
		out = append(out, candidate{d, 2, total[d] * ((1 - coverageBlend) + coverageBlend*coverage)})
	}
	return out
}

func (ix *index) buildVocab() {
	ix.vocab = map[int][]string{}
	for t := range ix.postings {
		ix.vocab[len(t)] = append(ix.vocab[len(t)], t)
		ix.sortedVocab = append(ix.sortedVocab, t)
	}
	for _, words := range ix.vocab {
		slices.Sort(words)
	}
	slices.Sort(ix.sortedVocab)
}

// nearWords returns the indexed words one edit (insertion, deletion,
// substitution or adjacent swap) away from w.
func (ix *index) nearWords(w string) []string {
	ix.vocabOnce.Do(ix.buildVocab)
	var out []string
	for n := len(w) - 1; n <= len(w)+1; n++ {
		for _, t := range ix.vocab[n] {
			if oneEdit(w, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// maxLongerWords bounds the words a prefix expands to.
const maxLongerWords = 8

// longerWords returns indexed words that start with w and are longer.
func (ix *index) longerWords(w string) []string {
	ix.vocabOnce.Do(ix.buildVocab)
	from, _ := slices.BinarySearch(ix.sortedVocab, w)
	var out []string
	for _, t := range ix.sortedVocab[from:] {
		if !strings.HasPrefix(t, w) || len(out) == maxLongerWords {
			break
		}
		if t != w {
			out = append(out, t)
		}
	}
	return out
}

// oneEdit reports whether a and b differ by exactly one edit.
func oneEdit(a, b string) bool {
	if a == b {
		return false
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	switch {
	case len(a) == len(b):
		if i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:] {
			return true // adjacent swap
		}
		return a[i+1:] == b[i+1:]
	default:
		return a[i:] == b[i+1:]
	}
}

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
	if len(cand) > maxAbbreviationCandidates {
		return nil // too short to say which tools it abbreviates
	}
	if len(cand) == 0 {
		return nil
	}
	names := make([]string, len(cand))
	for j, i := range cand {
		names[j] = ix.names[i]
	}
	var out []candidate
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
		out = append(out, candidate{cand[m.Index], 2, 1 + float64(m.Score)/10})
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
	case strings.HasSuffix(w, "ations") && len(w) > 8:
		return w[:len(w)-6] + "ate"
	case strings.HasSuffix(w, "ation") && len(w) > 7:
		return w[:len(w)-5] + "ate"
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
	"us": true, "was": true, "we": true, "what": true, "when": true, "where": true,
	"who": true, "will": true, "with": true, "would": true, "you": true, "your": true, "want": true,
	"need": true, "let": true, "lets": true, "just": true, "any": true, "all": true, "one": true,
	"tool": true, "tools": true, "using": true, "use": true, "via": true, "about": true, "could": true,
	"give": true, "tell": true, "also": true, "again": true, "still": true, "right": true, "now": true,
	"really": true, "even": true, "whether": true, "ever": true, "else": true, "bit": true, "thing": true,
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
