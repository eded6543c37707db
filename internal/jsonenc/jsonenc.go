// Package jsonenc appends JSON values to a byte slice exactly as
// encoding/json's Marshal writes them: strings with its escapes (HTML
// characters, U+2028 and U+2029 included, invalid UTF-8 as U+FFFD),
// float64 numbers in its ES6-like form, times in RFC 3339 with
// nanoseconds. The records (the audit log, session replay lines) write a
// line per tool call; encoding them through reflection cost more than
// the rest of recording, and their bytes on disk must not change, so
// each writer here is tested against Marshal.
package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// plain marks the ASCII bytes Marshal writes as they are: everything
// printable but the quote, the backslash and the HTML characters <, >, &.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// String appends s as Marshal writes a Go string.
func String[T ~string | ~[]byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := decodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// Valid JSON, but not JavaScript: Marshal escapes them.
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// decodeRune is utf8.DecodeRune for either kind of text, without
// converting a byte slice (a conversion of at most four bytes stays on
// the stack).
func decodeRune[T ~string | ~[]byte](s T) (rune, int) {
	n := min(len(s), utf8.UTFMax)
	return utf8.DecodeRuneInString(string(s[:n]))
}

// Plain reports whether String would write s between its quotes
// unchanged: then s may be copied as it is.
func Plain[T ~string | ~[]byte](s T) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !plain[c] {
				return false
			}
			i++
			continue
		}
		r, size := decodeRune(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// Float appends f as Marshal writes a float64. Marshal refuses NaN and
// the infinities; so does Float, returning ok false.
func Float(dst []byte, f float64) (out []byte, ok bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Marshal writes e-7, not e-07.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// Time appends t as Marshal writes a time.Time. Marshal refuses a year
// outside 0-9999 and a zone offset of a day or more; so does Time,
// returning ok false.
func Time(dst []byte, t time.Time) (out []byte, ok bool) {
	b, err := t.AppendText(append(dst, '"'))
	if err != nil {
		return dst, false
	}
	return append(b, '"'), true
}

// Graphic escapes what encoding/json leaves raw but a terminal may act on
// (control characters, DEL, C1 controls such as CSI, bidi overrides) as
// \u escapes. JSON stays valid JSON of the same value; plain text keeps
// its printable characters, spaces included, and loses only its power to
// drive the terminal it is shown on.
func Graphic(s string) string {
	clean := true
	for _, r := range s {
		if r != ' ' && !unicode.IsGraphic(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	for _, r := range s {
		if r == ' ' || unicode.IsGraphic(r) {
			b = utf8.AppendRune(b, r)
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != unicode.ReplacementChar {
			b = appendU(appendU(b, r1), r2)
		} else {
			b = appendU(b, r)
		}
	}
	return string(b)
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// Marshal is json.Marshal without its HTML escapes: what evokore writes
// is read by models and people, never embedded in a page, and "<dir>"
// as "\u003cdir\u003e" costs more tokens and means the same.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
