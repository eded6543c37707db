package replay

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/evokore/evokore/internal/rawjson"
)

// summaryKeys are the arguments that say what a call was about, in the
// order Summarize prefers them (Claude Code's tool inputs first).
var summaryKeys = []string{"command", "file_path", "path", "pattern", "url", "query", "description", "prompt", "skill_name", "name"}

// secretish reports whether an argument name looks like it holds a
// secret; its value is never summarised.
func secretish(key string) bool {
	k := strings.ToLower(key)
	for _, s := range []string{"password", "passwd", "secret", "token", "key", "credential", "auth", "cookie", "session"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// Summarize says in one line, at most MaxSummary characters, what a call
// with input was about: the first of the usual arguments (command,
// file_path, pattern, …) that is a string, else the sorted argument names.
// Values of arguments whose names look like secrets are never included.
func Summarize(input map[string]any) string {
	for _, k := range summaryKeys {
		if v, ok := input[k].(string); ok && v != "" {
			return Truncate(v, MaxSummary)
		}
	}
	var names []string
	for k, v := range input {
		if secretish(k) {
			names = append(names, k)
			continue
		}
		switch v := v.(type) {
		case string, float64, bool, json.Number:
			names = append(names, fmt.Sprintf("%s=%v", k, v))
		default:
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return Truncate(strings.Join(names, " "), MaxSummary)
}

// SummarizeJSON is Summarize of a JSON object read in place: the
// redacted arguments the router records are bytes (redact.CallArgs), and
// decoding them into a map again only to pick a few of them cost more
// than the summary. An object whose members repeat a name (which the
// records never hold) is summarised from every member, not the last. Text
// that is not an object is summarised as an object without members.
func SummarizeJSON(obj []byte) string {
	best := len(summaryKeys)
	var bestValue []byte
	err := rawjson.RawMembers(obj, func(k, v []byte) bool {
		if i := slices.Index(summaryKeys, string(rawjson.Name(k))); i >= 0 && i < best && len(v) > 2 && v[0] == '"' {
			best, bestValue = i, v
		}
		return best > 0
	})
	if best < len(summaryKeys) {
		// Only the value chosen is decoded: the others may be a file's
		// content.
		s, _ := rawjson.String(bestValue)
		return Truncate(s, MaxSummary)
	}
	if err != nil {
		return ""
	}
	var names []string
	_ = rawjson.Members(obj, func(k string, v []byte) bool {
		names = append(names, summaryName(k, v))
		return true
	})
	sort.Strings(names)
	return Truncate(strings.Join(names, " "), MaxSummary)
}

// summaryName is how Summarize names a member whose raw value is v.
func summaryName(k string, v []byte) string {
	if secretish(k) || len(v) == 0 {
		return k
	}
	switch c := v[0]; {
	case c == '"':
		if s, ok := rawjson.String(v); ok {
			return k + "=" + s
		}
	case c == 't' || c == 'f':
		return k + "=" + string(v)
	case c == '-' || '0' <= c && c <= '9':
		// Summarize prints the float64 a number decodes to with %v,
		// which is strconv's shortest 'g' form.
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return k + "=" + strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return k
}
