package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/evokore/evokore/internal/jsonenc"
)

// What an approval shows the human deciding it. The call that runs is
// the one the approval is bound to, whole (the binding hashes all of its
// arguments), so anything this text leaves out would run unseen: it lists
// every argument, says where and how much it cut, and writes nothing that
// could drive the terminal or page it is shown on.
const (
	// shownValue bounds one argument's value, in characters; the rest is
	// replaced by a marker saying how much was left out.
	shownValue = 1000
	// shownTotal bounds the whole text, in bytes; arguments past it are
	// counted, not shown. It is stored with each pending approval (with
	// at most shownBound more a Binder shows), and the MaxPending of them
	// are rewritten whenever one is filed: 3 MiB at most.
	shownTotal = 8 << 10
)

// Binder reads, for an approval, what else must not change between the
// approval and the run besides the arguments (execute_skill: the code of
// the step). It reads it once, so what the human is shown is what the
// binding holds.
type Binder func(args json.RawMessage) (Bound, error)

// Bound is what a Binder read.
type Bound struct {
	// Key goes into the approval's binding, and to the handler
	// (router.Call.Bound), which runs only what still hashes to it.
	Key string
	// Shown is what Key stands for, as the human deciding reads it
	// under the arguments (the step's code), one line a line.
	Shown string
}

// shownBound bounds what a Binder shows, in bytes, apart from the
// arguments: a step's code must not crowd them out, nor they it.
const shownBound = 4 << 10

// showBound renders a Binder's text under the arguments: each line
// escaped and marked as quoted text, the whole cut at shownBound with
// a mark saying how much more there was.
func showBound(text string) string {
	if text == "" {
		return ""
	}
	var b strings.Builder
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, line := range lines {
		line = "\n| " + jsonenc.Graphic(line)
		if b.Len()+len(line) > shownBound {
			fmt.Fprintf(&b, "\n… [%d more lines not shown]", len(lines)-i)
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// secretKey matches argument names whose values are not shown to
// operators, at any depth. It is narrower than package redact's rule,
// which hides eagerly (any name with "key" or "pin" in it) because a
// record cannot be taken back: here a hidden value is one the human
// approves unseen, so only names that almost surely hold a secret hide
// theirs.
var secretKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(pass(word|wd)?|secret|token|api[-_]?key|auth|credential|private[-_]?key|cookie|session[-_]?id)`)
})

// ShowArguments renders a call's arguments for the human approving it:
// one argument a line, `"name": value`, in name order; values as compact
// JSON with the values of secret-looking names redacted at any depth;
// characters a terminal acts on escaped; a value over shownValue
// characters cut with a marker, and arguments past shownTotal counted.
// Empty for no arguments.
func ShowArguments(args json.RawMessage) string {
	if len(bytes.TrimSpace(args)) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "(unreadable arguments) " + cutValue(jsonenc.Graphic(string(args)))
	}
	obj, isObject := v.(map[string]any)
	if !isObject {
		if v == nil {
			return ""
		}
		return cutValue(shownJSON(v))
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		if name != TokenField {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	for i, name := range names {
		line := shownJSON(name) + ": " + cutValue(shownJSON(redacted(name, obj[name])))
		if i > 0 {
			b.WriteByte('\n')
		}
		if b.Len()+len(line) > shownTotal {
			fmt.Fprintf(&b, "… [%d more arguments not shown]", len(names)-i)
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// redacted is v, the value of name, with every secret-looking name's
// value replaced.
func redacted(name string, v any) any {
	if secretKey().MatchString(name) {
		return "[redacted]"
	}
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = redacted(k, e)
		}
	case []any:
		for i, e := range v {
			v[i] = redacted("", e)
		}
	}
	return v
}

// shownJSON is v as compact JSON, without encoding/json's HTML escapes
// (the text is read, not embedded), with terminal controls escaped.
func shownJSON(v any) string {
	b, err := jsonenc.Marshal(v)
	if err != nil {
		return "(unreadable)"
	}
	return jsonenc.Graphic(string(b))
}

// cutValue cuts s after shownValue characters and says how many more
// there were.
func cutValue(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= shownValue {
		return s
	}
	i := 0
	for range shownValue {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return fmt.Sprintf("%s… [%d more characters not shown]", s[:i], n-shownValue)
}
