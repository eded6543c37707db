package canonjson

import (
	"encoding/json"
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
