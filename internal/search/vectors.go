package search

import (
	_ "embed"
	"encoding/binary"
	"math"
	"strings"
	"sync"
	"sync/atomic"
)

// vectorTable is vectors_gen.bin (see vectorgen for its source and
// format): 100,000 English words, each a unit vector of 100 int8
// dimensions. It is read in place, without copying or decoding: a word is
// found by binary search over its sorted word list. Its pages are the
// binary's, clean page cache; an index keeps the vectors of its own terms,
// so the table is read again only for query words no document has.
//
//go:embed vectors_gen.bin
var vectorTable string

// dims is the table's dimension count, and of every vector the index
// keeps.
const dims = 100

var (
	tableOnce sync.Once
	tableN    int    // words
	tableOffs string // (n+1) little-endian uint32 word starts
	tableText string // the words back to back
	tableVecs string // n×dims int8
)

func loadTable() {
	tableOnce.Do(func() {
		t := vectorTable
		if len(t) < 16 || t[:8] != "EVKVEC1\n" || binary.LittleEndian.Uint32([]byte(t[12:16])) != dims {
			return // a broken table turns semantic similarity off, never the search
		}
		n := int(binary.LittleEndian.Uint32([]byte(t[8:12])))
		rest := t[16:]
		if len(rest) < 4*(n+1) {
			return
		}
		offs := rest[:4*(n+1)]
		blob := int(binary.LittleEndian.Uint32([]byte(offs[4*n:])))
		rest = rest[4*(n+1):]
		if len(rest) != blob+n*dims {
			return
		}
		tableN, tableOffs, tableText, tableVecs = n, offs, rest[:blob], rest[blob:]
	})
}

func tableWord(i int) string {
	at := func(j int) int {
		s := tableOffs[4*j:]
		return int(uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24)
	}
	return tableText[at(i):at(i+1)]
}

// wordVector adds weight times the vector of w to v and reports whether
// the table has w.
func wordVector(w string, weight float32, v []float32) bool {
	loadTable()
	lo, hi := 0, tableN
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if tableWord(m) < w {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == tableN || tableWord(lo) != w {
		return false
	}
	row := tableVecs[lo*dims : (lo+1)*dims]
	// int8 quantised to a peak of 127: scale back to about unit length.
	weight /= 127
	for i := range v {
		v[i] += weight * float32(int8(row[i]))
	}
	return true
}

// lookupVector adds the vector of a word, or of a close form of it, to v:
// the word, then its stem and its singular, which the table may have when
// it lacks the form written ("subtasks").
func lookupVector(w string, weight float32, v []float32) bool {
	if wordVector(w, weight, v) {
		return true
	}
	if s := Stem(w); s != w && wordVector(s, weight, v) {
		return true
	}
	return strings.HasSuffix(w, "s") && wordVector(strings.TrimSuffix(w, "s"), weight, v)
}

func unitLength(v []float32) bool {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return false
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return true
}

// dot is the inner product of two vectors of dims dimensions.
func dot(a, b []float32) float32 {
	a, b = a[:dims], b[:dims]
	var s0, s1, s2, s3 float32
	for i := 0; i < dims; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	return s0 + s1 + s2 + s3
}

// Weights of what a document or a query says about its meaning.
const (
	// weakMeaning scales a term found only in weak fields: a parameter's
	// description says little about what the tool is for.
	weakMeaning = 0.3
	// unknownMeaning is the weight, against the idf of a word found in
	// one document, of a query word no document has: exactly the words
	// semantic similarity is for ("receipts" for a PDF tool).
	unknownMeaning = 0.6
)

// embed gives every term the vector of its words and every document the
// idf- and field-weighted mean of its terms' vectors.
func (ix *Index) embed() {
	loadTable()
	if tableN == 0 {
		return
	}
	nt := len(ix.terms)
	ix.termVecs = make([]float32, nt*dims)
	ix.termHas = make([]bool, nt)
	for i, w := range ix.raw {
		t := ix.rawTerm[i]
		if lookupVector(w, 1, ix.termVecs[int(t)*dims:int(t+1)*dims]) {
			ix.termHas[t] = true
		}
	}
	for t := range nt {
		v := ix.termVecs[t*dims : (t+1)*dims]
		if !ix.termHas[t] {
			ix.termHas[t] = lookupVector(ix.terms[t], 1, v)
		}
		if ix.termHas[t] {
			unitLength(v)
		}
	}
	var weak uint32
	for f, fl := range ix.opts.Fields {
		if fl.Weak {
			weak |= 1 << f
		}
	}
	ix.docVecs = make([]float32, ix.n*dims)
	for t, ps := range ix.postings {
		if !ix.termHas[t] {
			continue
		}
		tv := ix.termVecs[t*dims : (t+1)*dims]
		for _, p := range ps {
			w := ix.idf[t] * p.w
			if p.fields&^weak == 0 {
				w *= weakMeaning
			}
			dv := ix.docVecs[int(p.doc)*dims : int(p.doc+1)*dims]
			for i, x := range tv {
				dv[i] += w * x
			}
		}
	}
	for d := range ix.n {
		unitLength(ix.docVecs[d*dims : (d+1)*dims])
	}
}

// queryVector is the idf-weighted mean of the query words' vectors: an
// indexed word's as the documents have it, else the table's, else that
// of what a typo was corrected to. Nil when it knows no word.
func (ix *Index) queryVector(q *Query) []float32 {
	if ix.docVecs == nil {
		return nil
	}
	v := make([]float32, dims)
	for _, c := range q.concepts {
		if id, ok := ix.ids[c.stem]; ok {
			if ix.termHas[id] {
				ix.addTerm(v, id, ix.idf[id])
			}
			continue
		}
		if lookupVector(c.word, float32(unknownMeaning*ix.maxIDF), v) {
			continue
		}
		for _, a := range c.alts {
			if a.via == ViaTypo && ix.termHas[a.term] {
				ix.addTerm(v, a.term, ix.idf[a.term])
				break
			}
		}
	}
	if !unitLength(v) {
		return nil
	}
	return v
}

func (ix *Index) addTerm(v []float32, t int32, w float32) {
	for i, x := range ix.termVecs[int(t)*dims : int(t+1)*dims] {
		v[i] += w * x
	}
}

// docVec is document d's vector.
func (ix *Index) docVec(d int32) []float32 {
	return ix.docVecs[int(d)*dims : int(d+1)*dims]
}

// neighbour is an indexed term close in meaning to a query word.
type neighbour struct {
	term int32
	cos  float32
}

// maxNeighbours bounds the terms one query word reaches by meaning.
const maxNeighbours = 4

// maxUnknownNear bounds the cached neighbours of words no document has.
const maxUnknownNear = 4096

// neighbourhood is what soft matching keeps per index: each word's
// nearest terms, found on its first query and kept for the life of the
// index, so a word's scan over the vocabulary is paid once.
type neighbourhood struct {
	// known holds, by term, its neighbours once found.
	known []atomic.Pointer[[]neighbour]
	mu    sync.Mutex
	// unknown holds the neighbours of words no document has, by word;
	// cleared when full.
	unknown map[string][]neighbour
}

func (ix *Index) buildNeighbourhood() {
	ix.near = &neighbourhood{known: make([]atomic.Pointer[[]neighbour], len(ix.terms)), unknown: map[string][]neighbour{}}
}

// neighbours returns the indexed terms whose vectors are within
// Options.SoftMatch of the word's, closest first: the word's own vector
// as the documents have it when it is indexed, else the table's.
func (ix *Index) neighbours(w, s string) []neighbour {
	nb := ix.near
	if id, ok := ix.ids[s]; ok {
		if !ix.termHas[id] {
			return nil
		}
		if p := nb.known[id].Load(); p != nil {
			return *p
		}
		out := ix.scan(ix.termVecs[int(id)*dims:int(id+1)*dims], id)
		nb.known[id].Store(&out)
		return out
	}
	if len(w) > maxTypoWord {
		return nil // an identifier or a hash, not a word the table has
	}
	nb.mu.Lock()
	out, ok := nb.unknown[w]
	nb.mu.Unlock()
	if ok {
		return out
	}
	var qv [dims]float32
	if lookupVector(w, 1, qv[:]) && unitLength(qv[:]) {
		out = ix.scan(qv[:], -1)
	}
	nb.mu.Lock()
	if len(nb.unknown) >= maxUnknownNear {
		clear(nb.unknown)
	}
	nb.unknown[w] = out
	nb.mu.Unlock()
	return out
}

// scan finds the closest terms to qv, self excluded, above the floor.
func (ix *Index) scan(qv []float32, self int32) []neighbour {
	thr := float32(ix.opts.SoftMatch)
	var out []neighbour
	for t := range int32(len(ix.terms)) {
		if !ix.termHas[t] || t == self {
			continue
		}
		c := dot(qv, ix.termVecs[int(t)*dims:int(t+1)*dims])
		if c < thr {
			continue
		}
		if len(out) == maxNeighbours && c <= out[len(out)-1].cos {
			continue
		}
		i := len(out)
		if i < maxNeighbours {
			out = append(out, neighbour{})
		} else {
			i--
		}
		for i > 0 && out[i-1].cos < c {
			out[i] = out[i-1]
			i--
		}
		out[i] = neighbour{t, c}
	}
	return out
}
