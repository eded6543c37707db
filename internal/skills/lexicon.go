package skills

import (
	"math"
	"slices"
	"strings"
)

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

var fieldNames = [numFields]string{"name", "description", "aliases", "tags", "hints", "category", "metadata", "body"}

// fieldWeight orders the fields as the design asks: name > description >
// aliases > tags > hints > path > metadata > body.
var fieldWeight = [numFields]float64{6, 3.5, 3, 2.5, 2, 1.2, 1, 0.5}

// fieldB is BM25's length normalisation per field: none for the short
// fields, full for the body.
var fieldB = [numFields]float64{0.3, 0.5, 0.3, 0.3, 0.5, 0.2, 0.6, 0.75}

// shortField marks the fields whose terms typo tolerance looks at.
var shortField = [numFields]bool{fName: true, fAliases: true, fTags: true, fPath: true}

const bm25K1 = 1.2

// posting is one skill's weight for one term: the BM25F saturation
// tf/(k1+tf) over the weighted, length-normalised field frequencies. The
// query multiplies it by the term's idf.
type posting struct {
	doc    int32
	w      float32
	fields uint16 // bit per field holding the term
}

// lexicon is the inverted index over the library's terms.
type lexicon struct {
	n        int
	ids      map[string]int32
	vocab    []string // sorted, for prefix lookups
	byID     []string // term of each id
	vocabIDs []int32
	postings [][]posting
	idf      []float32
	// short lists the terms of the short fields, for typo tolerance, with
	// a letter mask each to skip hopeless candidates fast.
	short     []string
	shortMask []uint64
	// norm holds each skill's normalised name and description, for phrase
	// matches.
	normName   []string
	normDesc   []string
	paddedName []string // " " + normName + " ", for whole-word containment
}

func skillFields(s *Skill) [numFields]string {
	var f [numFields]string
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

func buildLexicon(skills []*Skill) *lexicon {
	lx := &lexicon{n: len(skills), ids: map[string]int32{}}
	type docTerms struct {
		tf  map[int32]*[numFields]uint16
		len [numFields]int
	}
	docs := make([]docTerms, len(skills))
	var total [numFields]float64
	shortSeen := map[string]bool{}
	lx.normName = make([]string, len(skills))
	lx.normDesc = make([]string, len(skills))
	lx.paddedName = make([]string, len(skills))
	for i, s := range skills {
		lx.normName[i] = normalize(s.Name)
		lx.paddedName[i] = " " + lx.normName[i] + " "
		lx.normDesc[i] = normalize(s.Description)
		d := docTerms{tf: map[int32]*[numFields]uint16{}}
		for f, text := range skillFields(s) {
			ts := terms(text)
			d.len[f] = len(ts)
			total[f] += float64(len(ts))
			for _, t := range ts {
				id, ok := lx.ids[t]
				if !ok {
					id = int32(len(lx.vocab))
					lx.ids[t] = id
					lx.vocab = append(lx.vocab, t)
				}
				c := d.tf[id]
				if c == nil {
					c = new([numFields]uint16)
					d.tf[id] = c
				}
				if c[f] < math.MaxUint16 {
					c[f]++
				}
				if shortField[f] && !shortSeen[t] {
					shortSeen[t] = true
					lx.short = append(lx.short, t)
				}
			}
		}
		docs[i] = d
	}
	var avg [numFields]float64
	for f := range avg {
		avg[f] = max(total[f]/float64(max(len(skills), 1)), 1)
	}
	lx.postings = make([][]posting, len(lx.vocab))
	for i, d := range docs {
		for id, c := range d.tf {
			var tf float64
			var bits uint16
			for f := range numFields {
				if c[f] == 0 {
					continue
				}
				bits |= 1 << f
				norm := 1 - fieldB[f] + fieldB[f]*float64(d.len[f])/avg[f]
				tf += fieldWeight[f] * float64(c[f]) / norm
			}
			lx.postings[id] = append(lx.postings[id], posting{doc: int32(i), w: float32(tf / (bm25K1 + tf)), fields: bits})
		}
	}
	lx.idf = make([]float32, len(lx.vocab))
	for id, ps := range lx.postings {
		slices.SortFunc(ps, func(a, b posting) int { return int(a.doc - b.doc) })
		df := float64(len(ps))
		lx.idf[id] = float32(math.Log(1 + (float64(lx.n)-df+0.5)/(df+0.5)))
	}
	// Sorted vocabulary for prefix lookups.
	order := make([]int32, len(lx.vocab))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(lx.vocab[a], lx.vocab[b]) })
	sorted := make([]string, len(order))
	for i, id := range order {
		sorted[i] = lx.vocab[id]
	}
	lx.byID = lx.vocab
	lx.vocab, lx.vocabIDs = sorted, order
	slices.Sort(lx.short)
	lx.shortMask = make([]uint64, len(lx.short))
	for i, t := range lx.short {
		lx.shortMask[i] = letterMask(t)
	}
	return lx
}

// termID returns the id of an indexed term.
func (lx *lexicon) termID(t string) (int32, bool) {
	id, ok := lx.ids[t]
	return id, ok
}

// prefixed returns up to limit terms that start with p (p itself
// excluded), most frequent first.
func (lx *lexicon) prefixed(p string, limit int) []int32 {
	i, _ := slices.BinarySearch(lx.vocab, p)
	var out []int32
	for ; i < len(lx.vocab) && strings.HasPrefix(lx.vocab[i], p); i++ {
		if lx.vocab[i] != p {
			out = append(out, lx.vocabIDs[i])
		}
	}
	if len(out) > limit {
		slices.SortFunc(out, func(a, b int32) int { return len(lx.postings[b]) - len(lx.postings[a]) })
		out = out[:limit]
	}
	return out
}

// letterMask has a bit per letter or digit present in s.
func letterMask(s string) uint64 {
	var m uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			m |= 1 << (c - 'a')
		case c >= '0' && c <= '9':
			m |= 1 << (26 + c - '0')
		default:
			m |= 1 << 63
		}
	}
	return m
}

// maxIDF is the idf of a term found in a single skill: the weight of a
// query word the library has never seen.
func (lx *lexicon) maxIDF() float32 {
	n := float64(lx.n)
	return float32(math.Log(1 + (n-1+0.5)/(1+0.5)))
}
