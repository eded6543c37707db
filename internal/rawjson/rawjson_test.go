package rawjson_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/rawjson"
)

func TestMembersReadsTopLevelValuesInPlace(t *testing.T) {
	obj := []byte(` { "id" : "a\"}b", "\u006dethod":"x", "params":{"n":[1,{"}":"{"}],"s":"]"}, "t":true, "n":-1.5e3 } `)
	got := map[string]string{}
	if err := rawjson.Members(obj, func(name string, v []byte) bool {
		got[name] = string(v)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"id": `"a\"}b"`, "method": `"x"`, "params": `{"n":[1,{"}":"{"}],"s":"]"}`, "t": "true", "n": "-1.5e3"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("members %v", got)
	}
	if s, ok := rawjson.String([]byte(got["id"])); !ok || s != `a"}b` {
		t.Errorf("String = %q %v", s, ok)
	}
	if !rawjson.IsTrue(rawjson.Member(obj, "t")) || rawjson.IsTrue(rawjson.Member(obj, "n")) {
		t.Error("IsTrue")
	}
	if rawjson.Member(obj, "absent") != nil {
		t.Error("absent member found")
	}
}

func TestMembersRefusesWhatIsNotAnObject(t *testing.T) {
	for _, in := range []string{``, `[]`, `"x"`, `{"a"}`, `{"a":1`, `{"a":1 "b":2}`} {
		if err := rawjson.Members([]byte(in), func(string, []byte) bool { return true }); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
	if err := rawjson.Members([]byte(`{}`), func(string, []byte) bool { t.Error("member in {}"); return true }); err != nil {
		t.Error(err)
	}
}

func TestQuoteEscapesWhatJSONRequires(t *testing.T) {
	for in, want := range map[string]string{"plain_name": `"plain_name"`, `a"b\c`: `"a\"b\\c"`, "tab\there": `"tab\there"`} {
		if got := string(rawjson.Quote(nil, in)); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestDecodeMatchesEncodingJSONWithUseNumber(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"b":[true,false,null,-2.5e10,"s\u00e9\n"],"c":{"d":{}},"e":[],"a":2}`,
		` "x" `, `12345678901234567890`, `[{"k":"v"},[[]]]`, `{"\u0041":"dup","A":"last"}`,
	} {
		got, err := rawjson.Decode([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		dec := json.NewDecoder(strings.NewReader(in))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v, want %#v", in, got, want)
		}
	}
	for _, in := range []string{`{"a":1} x`, `[1,]`, `{"a" 1}`, ``} {
		if _, err := rawjson.Decode([]byte(in)); err == nil {
			t.Errorf("%q decoded", in)
		}
	}
}
