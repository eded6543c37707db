package search

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// Words splits text into lower-case words of letters and digits.
// snake_case, kebab-case and dotted names split on their separators, and
// a lower-to-upper change starts a new camelCase word; a camelCase word
// is kept whole too ("GitLab" → git lab gitlab, "getFileInfo" → get file
// info getfileinfo), so both spellings meet.
func Words(text string) []string {
	var out []string
	start, whole, prevLower := -1, -1, false
	flush := func(i int) {
		out = append(out, strings.ToLower(text[start:i]))
		if whole < start {
			out = append(out, strings.ToLower(text[whole:i]))
		}
	}
	for i, r := range text {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case !alnum:
			if start >= 0 {
				flush(i)
				start = -1
			}
		case start < 0:
			start, whole = i, i
		case unicode.IsUpper(r) && prevLower:
			out = append(out, strings.ToLower(text[start:i]))
			start = i
		}
		prevLower = unicode.IsLower(r)
	}
	if start >= 0 {
		flush(len(text))
	}
	return out
}

// isStopWord reports the function words: they say nothing about what a
// document is for, in a query or in a document. Domain words that are
// merely common ("file", "get", "tool") are not here: their low idf
// already weighs them little, and in a tool name they still matter. It
// is a switch rather than a set built at start-up: the compiler turns it
// into a search over constant strings, with no package-level work.
func isStopWord(w string) bool {
	switch w {
	case "a", "an", "and", "are", "as", "at", "be", "been", "being", "by",
		"can", "could", "did", "do", "does", "doing", "for", "from", "had",
		"has", "have", "having", "he", "her", "here", "hers", "him", "his",
		"how", "i", "i'm", "if", "in", "into", "is", "it", "it's", "its", "me",
		"my", "myself", "of", "on", "onto", "or", "our", "ours", "please", "she",
		"should", "so", "some", "such", "than", "that", "the", "their", "theirs",
		"them", "then", "there", "these", "they", "this", "those", "to", "too",
		"us", "was", "we", "were", "what", "when", "where", "which", "while",
		"who", "whom", "why", "will", "with", "would", "you", "your", "yours",
		"just", "also", "want", "wants", "need", "needs", "let", "lets", "don",
		"doesn", "didn", "isn", "aren", "wasn", "won", "shall", "may", "might",
		"must", "very", "really", "know", "knows":
		return true
	}
	return false
}

// IsStopWord reports whether w (lower case) is a function word.
func IsStopWord(w string) bool { return isStopWord(w) }

// stemCache memoises the stemmer: a library or catalog repeats the same
// few thousand words, and Snowball allocates per call.
var stemCache sync.Map // string → string

// maxStemCache bounds the cache; hostile input must not grow it forever.
const maxStemCache = 1 << 17

var stemCacheLen int64
var stemCacheMu sync.Mutex

// Stem returns the Snowball (Porter2) English stem of a lower-case word.
// Words with digits ("k8s", "e2e", "v1") and very short words are kept
// as they are.
func Stem(w string) string {
	if len(w) <= 2 || !allLetters(w) {
		return w
	}
	if s, ok := stemCache.Load(w); ok {
		return s.(string)
	}
	s := english.Stem(w, true)
	if s == "" {
		s = w
	}
	stemCacheMu.Lock()
	if stemCacheLen < maxStemCache {
		stemCacheLen++
		stemCache.Store(w, s)
	}
	stemCacheMu.Unlock()
	return s
}

func allLetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// Terms are the indexed forms of a text: its words without stop words and
// one-letter words, stemmed.
func Terms(text string) []string {
	ws := Words(text)
	out := ws[:0]
	for _, w := range ws {
		if utf8.RuneCountInString(w) < 2 || isStopWord(w) {
			continue
		}
		out = append(out, Stem(w))
	}
	return out
}

// Normalize lower-cases s and folds every run of characters other than
// letters and digits into one space, so "Release_Readiness" and
// "release readiness" compare equal.
func Normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		space = true
	}
	return b.String()
}
