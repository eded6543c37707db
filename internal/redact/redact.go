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
// anywhere in a name ("pass(word|wd|phrase)?" is "pass" there).
var secretFragments = []string{"pass", "secret", "token", "key", "auth", "credential", "cookie",
	"sessionid", "session-id", "session_id", "signature", "bearer", "private", "jwt", "otp"}

// SecretKey reports whether values stored under name are secrets.
func SecretKey(name string) bool {
	var small [64]byte
	lower := small[:0]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= utf8.RuneSelf {
			// Unicode case folding (K as the Kelvin sign, s as the long s)
			// is the regexp's business.
			return secretKey().MatchString(name)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	for _, f := range secretFragments {
		if bytesContains(lower, f) {
			return true
		}
	}
	return len(lower) >= 3 && string(lower[len(lower)-3:]) == "pin"
}

// bytesContains is strings.Contains on a byte slice without converting
// it (and so without allocating).
func bytesContains(b []byte, sub string) bool {
	for i := 0; i+len(sub) <= len(b); i++ {
		if string(b[i:i+len(sub)]) == sub {
			return true
		}
	}
	return false
}

// Scrubber hides known secret values (resolved env placeholders, webhook
// secrets) inside strings. The zero value and nil hide nothing.
type Scrubber struct {
	// mu guards replacers against Extend: a reload adds the secrets of
	// the servers it brings while calls are being recorded.
	mu        sync.RWMutex
	replacers []*strings.Replacer
}

// Extend adds replacers (a reload's new or changed servers'); a secret
// once known stays hidden.
func (s *Scrubber) Extend(replacers ...*strings.Replacer) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range replacers {
		if r != nil {
			s.replacers = append(s.replacers, r)
		}
	}
}

// current is the replacers now in force.
func (s *Scrubber) current() []*strings.Replacer {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.replacers
}

// NewScrubber combines replacers (config.Server.Redactor, one per child)
// and literal secrets, which become Mask.
func NewScrubber(replacers []*strings.Replacer, literals ...string) *Scrubber {
	s := &Scrubber{}
	for _, r := range replacers {
		if r != nil {
			s.replacers = append(s.replacers, r)
		}
	}
	var pairs []string
	literals = slices.Clone(literals)
	slices.SortFunc(literals, func(a, b string) int { return len(b) - len(a) })
	for _, l := range literals {
		if len(l) >= 3 {
			pairs = append(pairs, l, Mask)
		}
	}
	if pairs != nil {
		s.replacers = append(s.replacers, strings.NewReplacer(pairs...))
	}
	return s
}

// String returns v with every known secret hidden.
func (s *Scrubber) String(v string) string {
	if s == nil {
		return v
	}
	for _, r := range s.current() {
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

// redactArgs returns decoded arguments with secret keys masked and every
// string scrubbed; arguments that are not a JSON object are summarised
// by their size alone, since nothing in them can be checked.
func (s *Scrubber) redactArgs(raw json.RawMessage, v any) map[string]any {
	if len(raw) == 0 {
		return map[string]any{}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return map[string]any{"_unreadable_bytes": len(raw)}
	}
	return s.Value(m).(map[string]any)
}

// Memo keeps what a call's records derive from it, once per call
// (router.Call.Note).
type Memo interface {
	Note(key any, build func() any) any
}

// CallArgs are a call's arguments as every record shows them.
type CallArgs struct {
	// Redacted is the arguments with every value under a secret key
	// masked and every string scrubbed, at any depth.
	Redacted map[string]any
	// Scrubber also hides the values the arguments hold under secret
	// keys, for the call's recorded answer.
	Scrubber *Scrubber
}

// Call returns a call's arguments as the records show them, decoding them
// once per call and scrubber however many records ask.
func (s *Scrubber) Call(m Memo, raw json.RawMessage) *CallArgs {
	return m.Note(s, func() any {
		v := decodeArgs(raw)
		return &CallArgs{Redacted: s.redactArgs(raw, v), Scrubber: s.forValue(v)}
	}).(*CallArgs)
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
	out := &Scrubber{}
	if s != nil {
		out.replacers = append(out.replacers, s.current()...)
	}
	// Longest first, so a secret that contains another is hidden whole.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	return NewScrubber(out.replacers, secrets...)
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
