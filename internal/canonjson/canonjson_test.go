package canonjson

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func TestKeyOrderDoesNotMatter(t *testing.T) {
	a, err := FromJSON([]byte(`{"b":1,"a":{"y":[3,{"q":1,"p":2}],"x":null},"c":"s"}`), "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FromJSON([]byte(` { "c" : "s", "a": {"x": null, "y": [3, {"p": 2, "q": 1}]}, "b": 1.0 }`), "")
	if string(a) != string(b) || string(a) != `{"a":{"x":null,"y":[3,{"p":2,"q":1}]},"b":1,"c":"s"}` {
		t.Errorf("%s vs %s", a, b)
	}
}

func TestDropRemovesOnlyTheTopLevelKey(t *testing.T) {
	got, _ := FromJSON([]byte(`{"tok":"x","n":{"tok":"kept"}}`), "tok")
	if string(got) != `{"n":{"tok":"kept"}}` {
		t.Errorf("got %s", got)
	}
}

// FuzzCanonical: any JSON renders to valid JSON that renders to itself
// (stable), equal in value to the input, and nothing panics.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"b":1,"a":2}`, `{"a":[1,2,{"z":true,"y":false}],"b":"\u00e9\n"}`, `1e400`, `"x"`, `{"a":1,"a":2}`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := FromJSON(raw, "")
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %q from %q", out, raw)
		}
		again, err := FromJSON(out, "")
		if err != nil || string(again) != string(out) {
			t.Fatalf("not stable: %q then %q (%v)", out, again, err)
		}
	})
}

// Arguments that differ only in digits a float64 cannot hold, or in
// invalid text that decoding would repair to U+FFFD, must not share a
// canonical form: an approval of one would run the other.
func TestDistinctArgumentsStayDistinct(t *testing.T) {
	pairs := [][2]string{
		{`{"n":18446744073709551616}`, `{"n":18446744073709551617}`},
		{`{"n":1.0}`, `{"n":1.00000000000000001}`},
		{`{"n":1e2}`, `{"n":100.0000000000000001}`},
	}
	for _, p := range pairs {
		a, err1 := FromJSON([]byte(p[0]), "")
		b, err2 := FromJSON([]byte(p[1]), "")
		if err1 != nil || err2 != nil || string(a) == string(b) {
			t.Errorf("%s and %s → %s, %s (%v %v)", p[0], p[1], a, b, err1, err2)
		}
	}
	same := [][2]string{{`{"n":1}`, `{"n":1.0}`}, {`{"n":100}`, `{"n":1e2}`}, {`{"n":0.5}`, `{"n":5E-1}`}, {`{"n":-0}`, `{"n":0}`}}
	for _, p := range same {
		a, _ := FromJSON([]byte(p[0]), "")
		b, _ := FromJSON([]byte(p[1]), "")
		if string(a) != string(b) {
			t.Errorf("%s and %s should agree: %s vs %s", p[0], p[1], a, b)
		}
	}
	for _, bad := range []string{"{\"s\":\"\xff\"}", `{"s":"\ud800"}`, `{"s":"\udc00"}`, `{"s":"\ud800\u0041"}`} {
		if out, err := FromJSON([]byte(bad), ""); err == nil {
			t.Errorf("%q accepted as %s", bad, out)
		}
	}
	if out, err := FromJSON([]byte(`{"s":"\ud83d\ude00","t":"\\ud800"}`), ""); err != nil {
		t.Errorf("a valid pair and an escaped backslash were refused: %v %s", err, out)
	}
}

// roundTrip is Marshal as it was before decoded values were written
// directly: through encoding/json and back.
func roundTrip(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return FromJSON(raw, "")
}

// FuzzMarshalMatchesTheRoundTrip: a decoded value (floats, or numbers as
// written) renders to the very bytes the round trip through JSON gives,
// so every hash of a tool definition stays what pins recorded.
func FuzzMarshalMatchesTheRoundTrip(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `null`, `{"b":1,"a":2}`, `{"type":"object","properties":{"n":{"type":"integer","minimum":-0,"maximum":1e300,"default":0.1}},"required":["n"]}`,
		`{"a":[1,2,{"z":true,"y":false}],"b":"\u00e9\n<&>\u2028"}`, `1e400`, `-0.0`, `18446744073709551617`, `"\ud83d\ude00"`, `[1.00000000000000001, 5E-1, 123456789012345678901234567890]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var floats any
		if json.Unmarshal(raw, &floats) == nil {
			compareWithRoundTrip(t, floats)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var numbers any
		if dec.Decode(&numbers) == nil {
			compareWithRoundTrip(t, numbers)
		}
	})
}

func compareWithRoundTrip(t *testing.T, v any) {
	t.Helper()
	got, err := Marshal(v)
	want, wantErr := roundTrip(v)
	if (err != nil) != (wantErr != nil) || string(got) != string(want) {
		t.Fatalf("Marshal(%#v) = %q, %v; the round trip gives %q, %v", v, got, err, want, wantErr)
	}
}

// What a round trip would change or refuse still takes it: invalid
// UTF-8 (repaired to U+FFFD), nil maps and slices (null), other types, a
// number json.Marshal refuses, and a map that holds itself (refused, not
// a crash).
func TestMarshalOfValuesTheRoundTripChanges(t *testing.T) {
	loop := map[string]any{}
	loop["self"] = loop
	for _, v := range []any{
		map[string]any{"s": "a\xffb"},
		map[string]any{"k\xfe": 1.0},
		[]any{"\xed\xa0\x80"},
		map[string]any{"m": map[string]any(nil), "l": []any(nil)},
		map[string]any{"ints": []int{3, 1}, "n": int64(1) << 60, "f32": float32(0.1)},
		map[string]any{"n": json.Number("01")},
		map[string]any{"n": json.Number("")},
		[]any{math.Inf(1)},
		loop,
	} {
		compareWithRoundTrip(t, v)
	}
}
