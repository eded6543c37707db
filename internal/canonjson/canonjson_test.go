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
