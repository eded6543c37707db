package jsonenc_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/evokore/evokore/internal/jsonenc"
)

// strs are texts whose encodings differ in every way Marshal has:
// HTML characters, control characters with and without short escapes,
// DEL, U+2028 and U+2029, invalid and truncated UTF-8, surrogate halves
// encoded as UTF-8, astral runes.
var strs = []string{
	"", "plain", `a "quoted" \ back\slash`, "<script>alert(1)</script> & more",
	"\x00\x01\x07\b\t\n\v\f\r\x1b\x1f\x7f", "line\u2028para\u2029end", "é ü 日本 🎉",
	"bad \xff byte", "cut \xe6\x97", "\xed\xa0\x80 surrogate", "\xc0\xaf overlong", "tail\xf0",
	"/slash/ 'single'", strings.Repeat("x<", 100),
}

func TestStringIsMarshal(t *testing.T) {
	for _, s := range strs {
		checkString(t, s)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range strs {
		f.Add(s)
	}
	f.Fuzz(checkString)
}

func checkString(t *testing.T, s string) {
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonenc.String([]byte("x"), s); string(got) != "x"+string(want) {
		t.Errorf("String(%q) = %s, Marshal wrote %s", s, got[1:], want)
	}
	if got := jsonenc.String(nil, []byte(s)); string(got) != string(want) {
		t.Errorf("String([]byte(%q)) = %s, Marshal wrote %s", s, got, want)
	}
	if plain := string(want) == `"`+s+`"`; jsonenc.Plain(s) != plain || jsonenc.Plain([]byte(s)) != plain {
		t.Errorf("Plain(%q) = %v, but Marshal wrote %s", s, !plain, want)
	}
}

var floats = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, 100, 1e6, 123456789012345, 1e20, 1e21, 1.2345e21,
	-1e21, 1e-6, 9.99e-7, 1e-7, 1.5e-10, 5e-324, math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3, 2.5e-300,
	12345678901234567890, 0.000001234, 3.14159}

func TestFloatIsMarshal(t *testing.T) {
	for _, f := range floats {
		checkFloat(t, f)
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, ok := jsonenc.Float(nil, f); ok {
			t.Errorf("Float(%v) is ok; Marshal refuses it", f)
		}
	}
}

func FuzzFloat(f *testing.F) {
	for _, x := range floats {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		checkFloat(t, x)
	})
}

func checkFloat(t *testing.T, f float64) {
	want, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := jsonenc.Float([]byte("x"), f)
	if !ok || string(got) != "x"+string(want) {
		t.Errorf("Float(%v) = %s %v, Marshal wrote %s", f, got, ok, want)
	}
}

func TestTimeIsMarshal(t *testing.T) {
	base := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	times := []time.Time{base, base.Add(890 * time.Millisecond), base.Add(800 * time.Millisecond), base.Add(123456789),
		base.In(time.FixedZone("x", -(7*3600 + 30*60))), time.Time{}, time.Date(9999, 12, 31, 23, 59, 59, 999, time.UTC)}
	for _, tm := range times {
		want, err := json.Marshal(tm)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := jsonenc.Time(nil, tm); !ok || string(got) != string(want) {
			t.Errorf("Time(%v) = %s %v, Marshal wrote %s", tm, got, ok, want)
		}
	}
	for _, tm := range []time.Time{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		base.In(time.FixedZone("far", 24*3600))} {
		if _, err := json.Marshal(tm); err == nil {
			t.Fatalf("Marshal(%v) works; the test expected it to fail", tm)
		}
		if got, ok := jsonenc.Time([]byte("x"), tm); ok || string(got) != "x" {
			t.Errorf("Time(%v) = %q %v; Marshal refuses it", tm, got, ok)
		}
	}
}

// Graphic leaves nothing a terminal acts on, and JSON it escapes decodes
// to the same value.
func TestGraphic(t *testing.T) {
	for _, s := range []string{"plain text, spaces kept", "\x1b[2J\x07\x7f\u0085\u009b\u200e\u202e\u2066\u2028\t\n", "emoji 🙂 and \U000E0001 tag"} {
		raw, _ := json.Marshal(s)
		g := jsonenc.Graphic(string(raw))
		for _, r := range g {
			if r != ' ' && !unicode.IsGraphic(r) {
				t.Errorf("Graphic(%q) keeps %U", raw, r)
			}
		}
		var back string
		if err := json.Unmarshal([]byte(g), &back); err != nil || back != s {
			t.Errorf("Graphic(%q) = %s decodes to %q (%v)", raw, g, back, err)
		}
	}
	if s := "as it was"; jsonenc.Graphic(s) != s {
		t.Errorf("Graphic(%q) = %q", s, jsonenc.Graphic(s))
	}
}
