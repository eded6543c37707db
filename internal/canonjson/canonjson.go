// Package canonjson renders JSON canonically: object keys sorted at every
// depth, no insignificant whitespace, array order kept. Two arguments that
// differ only in key order render to the same bytes, which is what hashes
// of tool definitions, approval tokens and cooldown keys need.
package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Marshal renders v canonically. v is first marshalled with encoding/json,
// so any value it accepts works. A value such as decoding JSON into an
// any gives (maps, slices, strings, float64, json.Number, bool, nil: a
// tool's schema) is written directly, to the same bytes the round trip
// through JSON would give: hashing a returning user's cached tool lists
// spent most of its time in that round trip.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if writeDecoded(&buf, v, 0) {
		return buf.Bytes(), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return FromJSON(raw, "")
}

// maxDirectDepth bounds the nesting writeDecoded follows; deeper values
// (or a map that holds itself) take the round trip, which refuses cycles.
const maxDirectDepth = 500

// writeDecoded writes v as write writes it after a round trip through
// encoding/json and reports true, or reports false when the round trip
// could give something else or fail: another type, text that is not
// valid UTF-8 (marshalling repairs it), a number json.Marshal refuses,
// nesting deeper than maxDirectDepth (a depth that starts below zero
// gives more room). On false buf holds a partial rendering.
func writeDecoded(buf *bytes.Buffer, v any, depth int) bool {
	if depth > maxDirectDepth {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			buf.WriteString("null")
			return true
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			if !utf8.ValidString(k) {
				return false
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			if !writeDecoded(buf, x[k], depth+1) {
				return false
			}
		}
		buf.WriteByte('}')
	case []any:
		if x == nil {
			buf.WriteString("null")
			return true
		}
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if !writeDecoded(buf, e, depth+1) {
				return false
			}
		}
		buf.WriteByte(']')
	case string:
		if !utf8.ValidString(x) {
			return false
		}
		writeString(buf, x)
	case float64, json.Number:
		// The number as json.Marshal writes it, then as the decoder
		// would have read it back.
		raw, err := json.Marshal(x)
		if err != nil {
			return false
		}
		buf.WriteString(canonicalNumber(json.Number(raw)))
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	case nil:
		buf.WriteString("null")
	default:
		return false
	}
	return true
}

// FromJSON renders raw JSON canonically. When drop is not empty, a
// top-level object key of that name is left out (the approval token is
// never part of what it approves). Numbers keep their written form.
//
// Text that JSON decoding would silently repair is refused instead: invalid
// UTF-8 and lone surrogate escapes both decode to U+FFFD, so two different
// argument sets would otherwise share one canonical form (and one
// approval).
func FromJSON(raw []byte, drop string) ([]byte, error) {
	if !utf8.Valid(raw) {
		return nil, errors.New("arguments are not valid UTF-8")
	}
	if err := checkSurrogates(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if m, ok := v.(map[string]any); ok && drop != "" {
		delete(m, drop)
	}
	var buf bytes.Buffer
	// Decoded from valid UTF-8 with numbers kept: every value is one
	// writeDecoded writes, at any depth the decoder accepts.
	if !writeDecoded(&buf, v, math.MinInt) {
		return nil, errors.New("arguments cannot be rendered canonically")
	}
	return buf.Bytes(), nil
}

// canonicalNumber writes a number by its exact decimal value: 1, 1.0 and
// 1e0 agree, while 2^64 and 2^64+1, or 1.0 and 1.00000000000000001, stay
// apart (a float64 would merge them). Numbers with huge exponents, whose
// exact value would be expensive to compute, keep their written form.
func canonicalNumber(n json.Number) string {
	s := n.String()
	if i, err := n.Int64(); err == nil {
		return strconv.FormatInt(i, 10)
	}
	if exp := exponent(s); exp > maxExponent || exp < -maxExponent {
		return strings.ToLower(s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return s
	}
	out := r.FloatString(fractionDigits(s))
	if strings.Contains(out, ".") {
		out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	}
	if out == "-0" {
		out = "0"
	}
	return out
}

// fractionDigits is how many decimals the exact value of the JSON number s
// can have: its written fraction digits less its exponent.
func fractionDigits(s string) int {
	mant := s
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
	}
	frac := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		frac = len(mant) - i - 1
	}
	if d := frac - exponent(s); d > 0 {
		return d
	}
	return 0
}

// maxExponent bounds the exponents canonicalNumber evaluates exactly.
const maxExponent = 400

// exponent returns the value after e/E in a JSON number, 0 without one.
func exponent(s string) int {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return 0
	}
	e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	if err != nil {
		return maxExponent + 1 // too long to parse: treat as huge
	}
	return e
}

// checkSurrogates refuses \u escapes that name half of a surrogate pair
// without the other half.
func checkSurrogates(raw []byte) error {
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 >= len(raw) {
				return nil // the decoder reports the truncation
			}
			if raw[i+1] != 'u' {
				i++
				continue
			}
			r, ok := hex4(raw, i+2)
			if !ok {
				return nil
			}
			i += 5
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return errors.New("arguments hold a lone low surrogate escape")
			case r >= 0xD800 && r <= 0xDBFF:
				if i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					if lo, ok := hex4(raw, i+3); ok && lo >= 0xDC00 && lo <= 0xDFFF {
						i += 6
						continue
					}
				}
				return errors.New("arguments hold a lone high surrogate escape")
			}
		}
	}
	return nil
}

func hex4(raw []byte, at int) (rune, bool) {
	if at+4 > len(raw) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(raw[at:at+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(v), true
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s)
	buf.Write(b)
}
