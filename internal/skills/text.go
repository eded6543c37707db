package skills

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// stopWords carry no meaning for finding a skill. They are dropped from
// queries before matching; a query made only of them is kept whole.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be by can could do does for from
		help how i i'm in into is it its me my new of on or our please should so the their
		them then there these this those to up us want we what when where which who why
		will with would you your need needs don doesn didn isn aren wasn won know get got
		just also`) {
		stopWords[w] = true
	}
}

// normalize lowercases s and collapses every run of characters other than
// letters and digits into one space, so "Release_Readiness" and
// "release readiness" compare equal.
func normalize(s string) string {
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

// words splits s into lowercase words of letters and digits.
func words(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case alnum && start < 0:
			start = i
		case !alnum && start >= 0:
			out = append(out, strings.ToLower(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, strings.ToLower(s[start:]))
	}
	return out
}

// terms are the indexed forms of a text: stemmed words, one letter words
// dropped (they are noise in every field).
func terms(s string) []string {
	ws := words(s)
	out := ws[:0]
	for _, w := range ws {
		if utf8.RuneCountInString(w) < 2 {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// stem strips the English inflections that separate a query from a
// skill's wording ("reviewing" / "reviews" / "review"). It is deliberately
// light: both sides of every comparison go through it, so it only has to
// be consistent, not linguistically right.
func stem(w string) string {
	n := len(w)
	if n <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ations") && n > 8:
		w = w[:n-4]
	case strings.HasSuffix(w, "ation") && n > 7:
		w = w[:n-3]
	case strings.HasSuffix(w, "ments") && n > 8:
		w = w[:n-5]
	case strings.HasSuffix(w, "ment") && n > 7:
		w = w[:n-4]
	case strings.HasSuffix(w, "ies") && n > 4:
		w = w[:n-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:n-2]
	case strings.HasSuffix(w, "ing") && n > 5:
		w = undouble(w[:n-3])
	case strings.HasSuffix(w, "ed") && n > 4:
		w = undouble(w[:n-2])
	case strings.HasSuffix(w, "es") && n > 4 && (strings.HasSuffix(w[:n-2], "s") || strings.HasSuffix(w[:n-2], "x") ||
		strings.HasSuffix(w[:n-2], "z") || strings.HasSuffix(w[:n-2], "ch") || strings.HasSuffix(w[:n-2], "sh")):
		w = w[:n-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:n-1]
	}
	if len(w) > 4 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// undouble turns "debugg" (from "debugging") back into "debug".
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) && !strings.ContainsRune("aeiou", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// queryTokens splits a query into distinct stemmed terms, dropping stop
// words unless nothing else is left.
func queryTokens(q string) (content []string, raw []string) {
	seen := map[string]bool{}
	var all []string
	for _, w := range words(q) {
		if utf8.RuneCountInString(w) < 2 {
			continue
		}
		all = append(all, w)
		if stopWords[w] {
			continue
		}
		if t := stem(w); !seen[t] {
			seen[t] = true
			content = append(content, t)
			raw = append(raw, w)
		}
	}
	if len(content) == 0 {
		for _, w := range all {
			if t := stem(w); !seen[t] {
				seen[t] = true
				content = append(content, t)
				raw = append(raw, w)
			}
		}
	}
	return content, raw
}

// synonyms are what query expansion adds when the words as typed find
// nothing: the abbreviations and near-synonyms of developer work. Keys and
// values are plain words; they are stemmed when used.
var synonyms = map[string][]string{
	"pr":            {"pull", "request", "review"},
	"prs":           {"pull", "request", "review"},
	"mr":            {"merge", "request", "review"},
	"cr":            {"code", "review"},
	"doc":           {"documentation", "readme"},
	"docs":          {"documentation", "readme"},
	"readme":        {"documentation"},
	"documentation": {"docs", "readme"},
	"bug":           {"debug", "defect", "fix"},
	"bugs":          {"debug", "defect", "fix"},
	"broken":        {"debug", "failure"},
	"crash":         {"panic", "debug", "failure"},
	"fix":           {"debug", "repair"},
	"perf":          {"performance", "profile", "latency"},
	"slow":          {"performance", "latency", "profile"},
	"fast":          {"performance"},
	"speed":         {"performance", "benchmark"},
	"sec":           {"security"},
	"vuln":          {"vulnerability", "security"},
	"vulns":         {"vulnerability", "security"},
	"cve":           {"vulnerability", "dependency", "security"},
	"secret":        {"credential", "leak"},
	"secrets":       {"credential", "leak"},
	"leak":          {"secret", "credential"},
	"ship":          {"release", "deploy"},
	"launch":        {"release", "deploy"},
	"deploy":        {"release", "rollout"},
	"rollback":      {"release", "incident"},
	"outage":        {"incident", "postmortem"},
	"down":          {"incident", "outage"},
	"postmortem":    {"incident", "review"},
	"oncall":        {"incident", "triage"},
	"ci":            {"pipeline", "build", "github", "actions"},
	"pipeline":      {"ci", "build"},
	"flaky":         {"intermittent", "test", "retry"},
	"test":          {"testing", "coverage"},
	"tests":         {"testing", "coverage"},
	"e2e":           {"end", "integration", "test"},
	"k8s":           {"kubernetes"},
	"db":            {"database", "migration"},
	"sql":           {"database", "query"},
	"deps":          {"dependency", "upgrade"},
	"upgrade":       {"dependency", "migration"},
	"mcp":           {"server", "tool", "protocol"},
	"tool":          {"mcp", "server"},
	"tools":         {"mcp", "server"},
	"agent":         {"orchestration", "subagent"},
	"agents":        {"orchestration", "subagent"},
	"plan":          {"planning", "orchestration"},
	"cleanup":       {"refactor"},
	"clean":         {"refactor"},
	"restructure":   {"refactor"},
	"rename":        {"refactor"},
	"changelog":     {"release", "notes"},
	"onboard":       {"ingest", "repository", "overview"},
	"onboarding":    {"ingest", "repository", "overview"},
	"codebase":      {"repository", "ingest"},
	"repo":          {"repository"},
	"api":           {"interface", "endpoint", "contract"},
	"log":           {"logging", "observability"},
	"logs":          {"logging", "observability"},
	"metrics":       {"observability", "monitoring"},
	"alert":         {"monitoring", "incident"},
	"prompt":        {"prompting", "instructions"},
	"permission":    {"governance", "approval", "rbac"},
	"permissions":   {"governance", "approval", "rbac"},
	"rbac":          {"permission", "governance"},
	"audit":         {"review", "security", "governance"},
}

// expand returns the synonyms of a query word, stemmed.
func expand(raw string) []string {
	var out []string
	for _, s := range synonyms[raw] {
		out = append(out, stem(s))
	}
	return out
}
