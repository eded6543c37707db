package search

import (
	_ "embed"
	"encoding/binary"
	"math"
	"strings"
	"sync"
	"unsafe"

	"github.com/evokore/evokore/internal/proctree"
)

// vectorTable is vectors_gen.bin (see vectorgen for its source and
// format): 100,000 English words, each a unit vector of 100 int8
// dimensions. It is read in place, without copying or decoding: a word is
// found by binary search over its sorted word list.
//
// Its pages are the binary's, so they count in the router's resident set
// once touched, and the kernel may map a large page-cache folio whole
// for one touched byte: building one index touched nearly all of its
// 11 MB. An index keeps the vectors of its own terms, so the table is
// read again only for query words no document has; its pages leave the
// resident set after every pass over it (releaseTable).
//
//go:embed vectors_gen.bin
var vectorTable string

// tableDroppable is whether the table's pages can be dropped from the
// page tables without losing anything (they are the binary file's own);
// decided once.
var tableDroppable = sync.OnceValue(func() bool { return proctree.CanDrop(tableSpan()) })

// tableSpan is the table's address range.
func tableSpan() (lo, hi uintptr) {
	lo = uintptr(unsafe.Pointer(unsafe.StringData(vectorTable)))
	return lo, lo + uintptr(len(vectorTable))
}

// releaseTable takes the table's pages out of the process's resident set
// (they stay in the page cache; a later lookup faults back what it
// reads).
func releaseTable() {
	if len(vectorTable) > 0 && tableDroppable() {
		proctree.Drop(tableSpan())
	}
}

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
	defer releaseTable()
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
	defer releaseTable()
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
