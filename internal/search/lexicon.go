package search

import (
	_ "embed"
	"strings"
	"sync"
)

// Via says how a query word met an indexed term.
type Via uint8

// The ways a query word meets a term, strongest first.
const (
	// ViaExact: the word's stem is the term.
	ViaExact Via = iota
	// ViaPrefix: the term is a derived form the word begins
	// (deploy → deployment's stem when the stemmer keeps them apart).
	ViaPrefix
	// ViaJargon: the developer-jargon table (k8s → kubernetes).
	ViaJargon
	// ViaTypo: the term is a few edits from the word.
	ViaTypo
	// ViaLexicon: WordNet says the words share a meaning or one is
	// derived from the other (height → elevation, relation →
	// relationship).
	ViaLexicon
	// ViaMeaning: the word is close in meaning to the term (their word
	// vectors' cosine passes Options.SoftMatch): a paraphrase that shares
	// no word with the document ("receipts" → invoice).
	ViaMeaning
)

// weight of a match by how it was found, against 1 for the word itself.
var viaWeight = [...]float64{ViaExact: 1, ViaPrefix: 0.75, ViaJargon: 0.9, ViaTypo: 0.7, ViaLexicon: 0.5, ViaMeaning: 0.5}

// Expanded reports whether the match needed query expansion.
func (v Via) Expanded() bool { return v == ViaJargon || v == ViaLexicon || v == ViaMeaning }

//go:embed wordnet_gen.txt
var wordnetText string

var (
	wordnetOnce sync.Once
	wordnet     map[string][]string
)

// related returns the stems WordNet relates to a stem: the other words of
// its frequent senses and its derivations. The table is generated (see
// wordnetgen) and parsed on first use.
func related(stem string) []string {
	wordnetOnce.Do(func() {
		wordnet = map[string][]string{}
		for _, line := range strings.Split(wordnetText, "\n") {
			if line == "" || line[0] == '#' {
				continue
			}
			key, rest, ok := strings.Cut(line, " ")
			if !ok {
				continue
			}
			wordnet[key] = strings.Fields(rest)
		}
	})
	return wordnet[stem]
}

// jargonTerms returns the stemmed words of what a jargon word stands for,
// one slice per phrase ("pr" → [pull request]).
func jargonTerms(word string) [][]string {
	jargonOnce.Do(func() {
		jargonStems = make(map[string][][]string, len(jargon))
		for w, phrases := range jargon {
			for _, phrase := range phrases {
				if ts := Terms(phrase); len(ts) > 0 {
					jargonStems[w] = append(jargonStems[w], ts)
				}
			}
		}
	})
	return jargonStems[word]
}

var (
	jargonOnce  sync.Once
	jargonStems map[string][][]string
)
