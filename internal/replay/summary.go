package replay

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
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
