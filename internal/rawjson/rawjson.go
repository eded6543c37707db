// Package rawjson reads JSON in place: the members of an object and the
// extent of a value, as sub-slices of the input, without decoding or
// copying anything. The proxy's fast path uses it to read a JSON-RPC
// envelope and a tools/call's {name, arguments, _meta} while the
// arguments and the child's result stay the bytes they arrived as.
//
// Every function expects input that encoding/json's Valid accepted (a
// scan that allocates nothing); on other input they return ErrSyntax or
// garbage, never panic. They exist because the go-sdk's decoder
// allocates a 32 KiB buffer per call (see package proxy).
package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrSyntax reports input that is not what the function expects.
var ErrSyntax = errors.New("rawjson: malformed JSON")

// SkipSpace returns the index of the first non-space byte at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i] == '"'.
func stringEnd(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, ErrSyntax
}

// valueEnd returns the index just past the value starting at b[i].
func valueEnd(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, ErrSyntax
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e, err := stringEnd(b, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, ErrSyntax
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j, nil
		}
		j++
	}
	return j, nil
}

// Members calls fn with each member of the object obj, in order: the
// member name unquoted (a string of its own: escapes resolved) and the
// raw value. fn returning false stops the walk.
func Members(obj []byte, fn func(name string, value []byte) bool) error {
	return RawMembers(obj, func(name, value []byte) bool { return fn(unquote(name), value) })
}

// RawMembers is Members with each name as its token, quotes and escapes
// included, so a caller that only compares names allocates nothing
// (Name resolves a token that holds escapes).
func RawMembers(obj []byte, fn func(name, value []byte) bool) error {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return ErrSyntax
	}
	i = SkipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return ErrSyntax
		}
		e, err := stringEnd(obj, i)
		if err != nil {
			return err
		}
		name := obj[i:e]
		i = SkipSpace(obj, e)
		if i >= len(obj) || obj[i] != ':' {
			return ErrSyntax
		}
		i = SkipSpace(obj, i+1)
		ve, err := valueEnd(obj, i)
		if err != nil {
			return err
		}
		if !fn(name, obj[i:ve]) {
			return nil
		}
		i = SkipSpace(obj, ve)
		if i >= len(obj) {
			return ErrSyntax
		}
		if obj[i] == '}' {
			return nil
		}
		if obj[i] != ',' {
			return ErrSyntax
		}
		i = SkipSpace(obj, i+1)
	}
	return ErrSyntax
}

// Name returns the text of a name token from RawMembers: the bytes
// between its quotes when it holds no escape (no copy: do not keep or
// modify them), else the escapes resolved.
func Name(tok []byte) []byte {
	if bytes.IndexByte(tok, '\\') < 0 {
		return tok[1 : len(tok)-1]
	}
	return []byte(unquote(tok))
}

// Elements calls fn with each element of the array arr, in order, raw.
// fn returning false stops the walk.
func Elements(arr []byte, fn func(value []byte) bool) error {
	i := SkipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return ErrSyntax
	}
	i = SkipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return nil
	}
	for i < len(arr) {
		e, err := valueEnd(arr, i)
		if err != nil || e == i {
			return ErrSyntax
		}
		if !fn(arr[i:e]) {
			return nil
		}
		i = SkipSpace(arr, e)
		if i >= len(arr) {
			return ErrSyntax
		}
		if arr[i] == ']' {
			return nil
		}
		if arr[i] != ',' {
			return ErrSyntax
		}
		i = SkipSpace(arr, i+1)
	}
	return ErrSyntax
}

// unquote turns a JSON string token into its text. A name without
// escapes costs one small string; one with escapes is decoded properly,
// so "\u0069d" is "id" here as it is to encoding/json.
func unquote(tok []byte) string {
	if bytes.IndexByte(tok, '\\') < 0 {
		return string(tok[1 : len(tok)-1])
	}
	s, _ := unescape(tok)
	return s
}

// String returns the text of a JSON string value, and false for any other
// value.
func String(v []byte) (string, bool) {
	v = bytes.TrimSpace(v)
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	return unescape(v)
}

// unescape decodes the string token tok, which holds escapes, as
// json.Unmarshal into a string does, without its reflection and
// validation passes (a recorded argument may be a file's content):
// invalid UTF-8 and lone surrogate escapes become U+FFFD, and what
// Unmarshal refuses (a control character, an unknown escape, text after
// the closing quote) fails.
func unescape(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[0] != '"' {
		return "", false
	}
	body := tok[1:]
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '"':
			if i != len(body)-1 {
				return "", false
			}
			return string(out), true
		case c == '\\':
			if i+1 >= len(body) {
				return "", false
			}
			switch e := body[i+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := Hex4(body, i+2)
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if lo, ok := Hex4(body, i+2); ok && body[i] == '\\' && body[i+1] == 'u' {
						if pair := utf16.DecodeRune(r, lo); pair != utf8.RuneError {
							out = utf8.AppendRune(out, pair)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(body[i:])
			out = utf8.AppendRune(out, r) // U+FFFD for a byte that is not UTF-8
			i += size
		}
	}
	return "", false
}

// Hex4 reads the four hex digits of a \u escape at b[i:].
func Hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Quote appends s to dst as a JSON string.
func Quote(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			q, _ := json.Marshal(s)
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// IsTrue reports whether the raw value is the literal true.
func IsTrue(v []byte) bool { return string(bytes.TrimSpace(v)) == "true" }

// Member returns the raw value of the member called name, or nil. When
// the name repeats it is the last one's, the value a decoder reads
// (encoding/json, the go-sdk's, JavaScript's JSON.parse): what a client
// reads from bytes passed on is what the router reads from them.
func Member(obj []byte, name string) []byte {
	var out []byte
	_ = RawMembers(obj, func(tok, v []byte) bool {
		if string(Name(tok)) == name {
			out = v
		}
		return true
	})
	return out
}

// Int returns an integer value, and false for anything else.
func Int(v []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	return n, err == nil
}

// Decode turns valid JSON into the values encoding/json gives with
// UseNumber (map[string]any, []any, json.Number, string, bool, nil),
// reading the input in place, nested at most MaxDecodeDepth deep as
// encoding/json allows: a string without escapes is one
// allocation, a number none beyond its json.Number. Argument validation
// uses it, so the arguments are decoded once, cheaply, and never by a
// streaming Decoder. The input must be valid JSON (json.Valid).
func Decode(b []byte) (any, error) {
	i := SkipSpace(b, 0)
	v, end, err := decodeValue(b, i, 0)
	if err != nil {
		return nil, err
	}
	if SkipSpace(b, end) != len(b) {
		return nil, ErrSyntax
	}
	return v, nil
}

// MaxDecodeDepth is encoding/json's nesting limit, kept here so that
// Decode refuses what encoding/json refuses, on the stack it can afford.
const MaxDecodeDepth = 10000

// decodeValue decodes the value at b[i], depth levels deep, and returns
// it with the index just past it.
func decodeValue(b []byte, i, depth int) (any, int, error) {
	if i >= len(b) || depth > MaxDecodeDepth {
		return nil, 0, ErrSyntax
	}
	switch c := b[i]; {
	case c == '{':
		return decodeObject(b, i, depth)
	case c == '[':
		return decodeArray(b, i, depth)
	case c == '"':
		return decodeString(b, i)
	case c == 't' || c == 'f' || c == 'n':
		return decodeLiteral(b, i)
	default:
		e, err := valueEnd(b, i)
		if err != nil || e == i {
			return nil, 0, ErrSyntax
		}
		return json.Number(b[i:e]), e, nil
	}
}

// decodeObject decodes the object at b[i] == '{'; a repeated name keeps
// its last value, as encoding/json does.
func decodeObject(b []byte, i, depth int) (any, int, error) {
	m := map[string]any{}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return m, i + 1, nil
	}
	for i < len(b) {
		if b[i] != '"' {
			return nil, 0, ErrSyntax
		}
		e, err := stringEnd(b, i)
		if err != nil {
			return nil, 0, err
		}
		key := unquote(b[i:e])
		i = SkipSpace(b, e)
		if i >= len(b) || b[i] != ':' {
			return nil, 0, ErrSyntax
		}
		v, ve, err := decodeValue(b, SkipSpace(b, i+1), depth+1)
		if err != nil {
			return nil, 0, err
		}
		m[key] = v
		i = SkipSpace(b, ve)
		if i < len(b) && b[i] == '}' {
			return m, i + 1, nil
		}
		if i >= len(b) || b[i] != ',' {
			return nil, 0, ErrSyntax
		}
		i = SkipSpace(b, i+1)
	}
	return nil, 0, ErrSyntax
}

// decodeArray decodes the array at b[i] == '['.
func decodeArray(b []byte, i, depth int) (any, int, error) {
	a := []any{}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return a, i + 1, nil
	}
	for i < len(b) {
		v, ve, err := decodeValue(b, i, depth+1)
		if err != nil {
			return nil, 0, err
		}
		a = append(a, v)
		i = SkipSpace(b, ve)
		if i < len(b) && b[i] == ']' {
			return a, i + 1, nil
		}
		if i >= len(b) || b[i] != ',' {
			return nil, 0, ErrSyntax
		}
		i = SkipSpace(b, i+1)
	}
	return nil, 0, ErrSyntax
}

// decodeString decodes the string at b[i] == '"'.
func decodeString(b []byte, i int) (any, int, error) {
	e, err := stringEnd(b, i)
	if err != nil {
		return nil, 0, err
	}
	s, ok := String(b[i:e])
	if !ok {
		return nil, 0, ErrSyntax
	}
	return s, e, nil
}

// decodeLiteral decodes true, false or null at b[i].
func decodeLiteral(b []byte, i int) (any, int, error) {
	e, _ := valueEnd(b, i)
	switch string(b[i:e]) {
	case "true":
		return true, e, nil
	case "false":
		return false, e, nil
	case "null":
		return nil, e, nil
	}
	return nil, 0, ErrSyntax
}
