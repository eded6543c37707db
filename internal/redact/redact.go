// Package redact keeps secrets out of what evokore records about tool
// calls: the audit log, webhook payloads, session replay lines and trace
// attributes. It owns two rules and nothing else:
//
//   - a value stored under a key that looks like a secret (token,
//     password, secret, key, authorization, cookie, credential, session
//     id…), at any depth of the arguments, becomes "[REDACTED]";
//   - every value an env placeholder put into mcp.config.json (a child's
//     ${VAR} in its env, args, headers, url…) is written back as ${VAR}
//     wherever it appears in a recorded string, as config.Server.Redactor
//     does for stderr; webhook secrets are hidden the same way.
//
// It is deliberately eager: a harmless value under a key named "keyboard"
// is hidden too, because a missed secret cannot be taken back.
package redact

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Mask is what a secret value becomes.
const Mask = "[REDACTED]"

// secretKey is the rule for argument names whose values are never
// recorded. secretKeyASCII is the same rule for ASCII names without the
// regexp engine: every recorded call checks every argument name, and the
// case-insensitive regexp cost more than the rest of recording.
var secretKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(pass(word|wd|phrase)?|secret|token|key|auth|credential|cookie|session[-_]?id|signature|bearer|private|jwt|otp|pin$)`)
})

// secretFragments are the alternatives of secretKey that may appear
// anywhere in a name ("pass(word|wd|phrase)?" is "pass" there), by
// their first letter: a name is read once, each letter trying only the
// fragments it begins.
var secretFragments = func() (byFirst [26][]string) {
	for _, f := range []string{"pass", "secret", "token", "key", "auth", "credential", "cookie",
		"sessionid", "session-id", "session_id", "signature", "bearer", "private", "jwt", "otp"} {
		byFirst[f[0]-'a'] = append(byFirst[f[0]-'a'], f)
	}
	return byFirst
}()

// SecretKey reports whether values stored under name are secrets.
func SecretKey(name string) bool { return secretName(name) }

// secretName is SecretKey for names read in place (rawArgs) as well.
func secretName[T string | []byte](name T) bool {
	var small [64]byte
	lower := small[:0]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= utf8.RuneSelf {
			// Unicode case folding (K as the Kelvin sign, s as the long s)
			// is the regexp's business.
			return secretKey().MatchString(string(name))
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	for i, c := range lower {
		if c < 'a' || c > 'z' {
			continue
		}
		for _, f := range secretFragments[c-'a'] {
			if len(lower)-i >= len(f) && string(lower[i:i+len(f)]) == f {
				return true
			}
		}
	}
	return len(lower) >= 3 && string(lower[len(lower)-3:]) == "pin"
}

// Scrubber hides known secret values (resolved env placeholders, webhook
// secrets) inside strings. The zero value and nil hide nothing.
type Scrubber struct {
	// mu guards the rules against Extend: a reload adds the secrets of
	// the servers it brings while calls are being recorded.
	mu    sync.RWMutex
	rules rules
}

// rules are the replacers a scrubber applies in turn, and every text
// one of them replaces (needles): a string holding none of the needles
// comes out of the replacers unchanged, which a scan of the raw
// arguments can tell without running them (see rawArgs).
type rules struct {
	replacers []*strings.Replacer
	needles   [][]byte
}

// add appends a replacer of old/new pairs, as strings.NewReplacer takes
// them.
func (r *rules) add(pairs []string) {
	if len(pairs) < 2 {
		return
	}
	r.replacers = append(r.replacers, strings.NewReplacer(pairs...))
	for i := 0; i+1 < len(pairs); i += 2 {
		r.needles = append(r.needles, []byte(pairs[i]))
	}
}

// Extend adds rules, each the old/new pairs of one replacer (a reload's
// new or changed servers', config.Server.RedactPairs); a secret once
// known stays hidden.
func (s *Scrubber) Extend(pairs ...[]string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range pairs {
		s.rules.add(p)
	}
}

// current is the rules now in force. Extend only appends, so the slices
// read here never change under their reader.
func (s *Scrubber) current() rules {
	if s == nil {
		return rules{}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rules
}

// NewScrubber combines rules, each the old/new pairs of one replacer
// (config.Server.RedactPairs, one per child), and literal secrets, which
// become Mask.
func NewScrubber(pairs [][]string, literals ...string) *Scrubber {
	s := &Scrubber{}
	for _, p := range pairs {
		s.rules.add(p)
	}
	s.rules = s.rules.withLiterals(literals)
	return s
}

// withLiterals returns a copy of r that also turns literals into Mask,
// longest first, so a secret that contains another is hidden whole.
// Literals shorter than three bytes are left alone: they would mask
// half of every text.
func (r rules) withLiterals(literals []string) rules {
	var pairs []string
	literals = slices.Clone(literals)
	slices.SortFunc(literals, func(a, b string) int { return len(b) - len(a) })
	for _, l := range literals {
		if len(l) >= 3 {
			pairs = append(pairs, l, Mask)
		}
	}
	out := rules{replacers: slices.Clip(r.replacers), needles: slices.Clip(r.needles)}
	out.add(pairs)
	return out
}

// String returns v with every known secret hidden.
func (s *Scrubber) String(v string) string {
	if s == nil {
		return v
	}
	for _, r := range s.current().replacers {
		v = r.Replace(v)
	}
	return v
}

// Value returns a copy of a decoded JSON value with secret keys masked
// and every string scrubbed, at any depth.
func (s *Scrubber) Value(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if SecretKey(k) {
				out[s.String(k)] = Mask
				continue
			}
			out[s.String(k)] = s.Value(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = s.Value(val)
		}
		return out
	case string:
		return s.String(x)
	}
	return v
}

// decodeArgs decodes arguments; nil when they are empty or unreadable.
func decodeArgs(raw json.RawMessage) any {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

// Memo keeps what a call's records derive from it, once per call
// (router.Call.Note).
type Memo interface {
	Note(key any, build func() any) any
}

// CallArgs are a call's arguments as every record shows them.
type CallArgs struct {
	// Redacted is the arguments with every value under a secret key
	// masked and every string scrubbed, at any depth, as json.Marshal
	// writes them decoded into a map: keys sorted, no spaces. Arguments
	// that are not a JSON object are {"_unreadable_bytes":N}. Shared by
	// every record of the call: never modify it.
	Redacted json.RawMessage
	// Unreadable is N, the size of arguments that are not a JSON object,
	// and 0 for those that are.
	Unreadable int
	// Scrubber also hides the values the arguments hold under secret
	// keys, for the call's recorded answer.
	Scrubber *Scrubber
}

// emptyObject is the Redacted of a call without arguments.
var emptyObject = json.RawMessage(`{}`)

// Call returns a call's arguments as the records show them, deriving them
// once per call and scrubber however many records ask.
func (s *Scrubber) Call(m Memo, raw json.RawMessage) *CallArgs {
	return m.Note(s, func() any { return s.callArgs(raw) }).(*CallArgs)
}

// callArgs reads the arguments in place (rawArgs) when it can promise
// the bytes decoding, redacting and encoding them would give; else, or
// when a configured secret occurs in them, it does just that.
func (s *Scrubber) callArgs(raw json.RawMessage) *CallArgs {
	if len(raw) == 0 {
		return &CallArgs{Redacted: emptyObject, Scrubber: s}
	}
	if a, ok := s.rawCallArgs(raw); ok {
		return a
	}
	return s.decodedCallArgs(raw)
}

func (s *Scrubber) rawCallArgs(raw json.RawMessage) (*CallArgs, bool) {
	r := s.current()
	out, secrets, ok := rawArgs(raw, r.needles)
	if !ok {
		return nil, false
	}
	a := &CallArgs{Redacted: out, Scrubber: s}
	if len(secrets) > 0 {
		a.Scrubber = &Scrubber{rules: r.withLiterals(secrets)}
	}
	return a, true
}

// decodedCallArgs derives the records' arguments by decoding them: the
// reference rawArgs is tested against.
func (s *Scrubber) decodedCallArgs(raw json.RawMessage) *CallArgs {
	v := decodeArgs(raw)
	m, ok := v.(map[string]any)
	if !ok {
		// Nothing in them can be checked: only their size is recorded.
		return &CallArgs{Redacted: fmt.Appendf(nil, `{"_unreadable_bytes":%d}`, len(raw)), Unreadable: len(raw),
			Scrubber: s.forValue(v)}
	}
	out, err := json.Marshal(s.Value(m))
	if err != nil {
		// A decoded value always encodes; should that change, the
		// records say so rather than carry something unchecked.
		out = []byte(`{"_unencodable":true}`)
	}
	return &CallArgs{Redacted: out, Scrubber: s.forValue(v)}
}

// Truncate cuts v to at most limit bytes on a rune boundary, marking the
// cut with "…"; limit <= 0 keeps v whole.
func Truncate(v string, limit int) string {
	if limit <= 0 || len(v) <= limit {
		return v
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + "…"
}

// forValue returns a scrubber that also hides the values decoded
// arguments hold under secret keys, at any depth: a tool that echoes its
// password argument back must not put it in the records through its
// answer.
func (s *Scrubber) forValue(v any) *Scrubber {
	if v == nil {
		return s
	}
	var secrets []string
	var walk func(v any, secret bool)
	walk = func(v any, secret bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				walk(val, secret || SecretKey(k))
			}
		case []any:
			for _, val := range x {
				walk(val, secret)
			}
		case string:
			if secret {
				secrets = append(secrets, x)
			}
		case float64, json.Number:
			if secret {
				if b, err := json.Marshal(x); err == nil {
					secrets = append(secrets, string(b))
				}
			}
		}
	}
	walk(v, false)
	if len(secrets) == 0 {
		return s
	}
	return &Scrubber{rules: s.current().withLiterals(secrets)}
}

// Bounded scrubs text and cuts it to limit bytes. Only the head of a long
// text is scrubbed: what lies beyond is cut anyway, and a tool's answer
// may be megabytes.
func (s *Scrubber) Bounded(text string, limit int) string {
	if head := 16 * max(limit, 1024); len(text) > head {
		text = text[:head]
	}
	return Truncate(s.String(text), limit)
}
