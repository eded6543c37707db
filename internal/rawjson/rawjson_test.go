package rawjson_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

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

// A repeated member reads as its last value, as decoders read it, escaped
// names included.
func TestMemberIsTheLastOfARepeatedName(t *testing.T) {
	obj := []byte(`{"isError":false,"content":[],"is\u0045rror":true,"x":1}`)
	if got := string(rawjson.Member(obj, "isError")); got != "true" {
		t.Errorf("isError = %s, want the last value, true", got)
	}
	var decoded struct {
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(obj, &decoded); err != nil || !decoded.IsError {
		t.Errorf("encoding/json reads %v (%v): the test's premise changed", decoded.IsError, err)
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

// Decode gives what encoding/json gives with UseNumber for any valid
// UTF-8 input, objects, arrays, escapes and repeated names included. (A
// string without escapes is copied as it stands: invalid UTF-8 in it is
// not replaced, where encoding/json writes U+FFFD.)
func FuzzDecode(f *testing.F) {
	for _, in := range []string{`{"a":1,"b":[true,false,null,-2.5e10,"s\u00e9\n"],"c":{"d":{}},"e":[],"a":2}`,
		` [ 1 , [ ] , { } ] `, `"\ud83c\udf89"`, `{"\u0041":"dup","A":"last"}`, `0.5`, `null`} {
		f.Add([]byte(in))
	}
	for _, in := range benchArguments {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) || !utf8.Valid(in) {
			return
		}
		got, err := rawjson.Decode(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		dec := json.NewDecoder(bytes.NewReader(in))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %#v, want %#v", in, got, want)
		}
	})
}

// stringTokens are string values with escapes of every kind, valid and
// not: what String decodes itself instead of calling json.Unmarshal.
var stringTokens = []string{`"a\nb"`, `"\u00e9\u003c\ud83c\udf89"`, `"lone \ud800 x"`, `"\udc00\ud800"`, `"\ud800\u0041"`,
	`"bad utf8 ` + "\xff\xe6\x97" + ` \t"`, `"\x"`, `"\'"`, `"\u12"`, `"\u12G4"`, `"a\"b" x`, `"a\"`, `"tab` + "\t" + `\n"`,
	`"\/\\\"\b\f\r"`, `"\ud83c\udf89\ud83c"`, `"\uD83C\uDF89"`, `"é\n"`, "\"\\b\"\f"}

// String decodes escapes exactly as json.Unmarshal into a string does,
// and refuses what it refuses.
func TestStringIsUnmarshal(t *testing.T) {
	for _, tok := range stringTokens {
		checkString(t, []byte(tok))
	}
}

func FuzzString(f *testing.F) {
	for _, tok := range stringTokens {
		f.Add([]byte(tok))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 0 && b[0] == '"' {
			checkString(t, b)
		}
	})
}

func checkString(t *testing.T, tok []byte) {
	t.Helper()
	if !strings.Contains(string(tok), `\`) {
		return // copied as it stands, not decoded
	}
	var want string
	err := json.Unmarshal(bytes.TrimSpace(tok), &want)
	got, ok := rawjson.String(tok)
	if ok != (err == nil) || got != want {
		t.Errorf("String(%q) = %q %v; Unmarshal gives %q %v", tok, got, ok, want, err)
	}
}

// benchArguments are tools/call arguments as the fast path sees them: a
// small query, and a file edit with nested edits, escapes and numbers.
var benchArguments = map[string][]byte{
	"small": []byte(`{"query":"read a file","limit":10}`),
	"edit": []byte(`{"path":"/home/user/project/src/main.go","dryRun":false,"mode":420,"tags":["go","edit","review"],` +
		`"edits":[` + strings.Repeat(`{"oldText":"func main() {\n\tfmt.Println(\"hello\")\n}","newText":"func main() {\n\tlog.Print(\"hi\")\n}","line":12,"weight":0.75,"anchor":null},`, 20) +
		`{"oldText":"","newText":"// end\n","line":-1}],"options":{"backup":true,"encoding":"utf-8","limits":{"max":1e6,"min":0}}}`),
}

// BenchmarkDecode decodes arguments as argument validation does.
func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"small", "edit"} {
		in := benchArguments[name]
		if !json.Valid(in) {
			b.Fatalf("%s: invalid", name)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rawjson.Decode(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
