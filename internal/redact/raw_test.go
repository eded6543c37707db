package redact_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/redact"
	"github.com/evokore/evokore/internal/router"
)

// scrubber knows one env placeholder value and one literal secret, as a
// router with a child and a webhook does.
func scrubber() *redact.Scrubber {
	srv := config.Server{ID: "gh", Command: "gh-mcp", Env: map[string]string{"GITHUB_TOKEN": "${GH_TOKEN}"}}
	env := config.NewEnv(map[string]string{"GH_TOKEN": "ghp_planted123"})
	return redact.NewScrubber([][]string{srv.RedactPairs(env)}, "hook-secret")
}

// rawCases are arguments the in-place path reads (inPlace) or hands to
// the decode path, covering what decoding and encoding change: key
// order, spaces, escapes, HTML characters, U+2028, number forms.
var rawCases = []struct {
	args    string
	inPlace bool
}{
	{`{}`, true},
	{` { } `, true},
	{`{"a":1,"b":"x"}`, true},
	{`{"b":"x","a":1}`, true},
	{"{ \"query\" : \"go\" ,\n\t\"page\" : 2 }", true},
	{`{"z":{"y":[3,{"b":1,"a":2}],"x":null},"a":[true,false,null,[],{}]}`, true},
	{`{"html":"<b>&amp;</b>","sep":"a` + "\u2028" + `b` + "\u2029" + `"}`, true},
	{`{"amp":"a & b"}`, true},
	{`{"gt":"a > b"}`, true},
	{`{"ps":"a` + "\u2029" + `"}`, true},
	{`{"q":"\ud800\u0041"}`, false}, // a high surrogate, then not a low one
	{`{"esc":"line\nnext\t\"q\" \\ \/ \u00e9 \u003c \ud83c\udf89 \u0000 \u001f \u2028"}`, true},
	{`{"k\u0065y2":1,"ke\u0079":2}`, true}, // escaped names: secret after decoding
	{`{"é":"日本","a b":"c","a=b":"d"}`, true},
	{`{"n":[0,-0,1.0,1e2,1E+2,-1.5e-7,0.1,123456789012345,1234567890123456789,1e21,1e-400,5e-324,-0.0]}`, true},
	{`{"password":"pw-123456","pin":1234,"deep":{"list":[{"apiKey":"k1"},{"ok":"fine"}],"token":{"a":["t-1234",1.5e3,true,null]}}}`, true},
	{`{"Authorization":"Bearer abc","keyboard":"qwerty","author":"me","spin":1}`, true},
	{`{"secret":"dup","secret":"dup2"}`, false},                            // the decode path keeps the last
	{`{"a":1,"b":2,"a":3}`, false},                                         // unordered duplicate
	{`{"q":"uses ghp_planted123"}`, false},                                 // a configured secret
	{`{"q":"uses ghp_planted\u0031\u00323"}`, false},                       // hidden by escapes
	{`{"ghp_planted123":1}`, false},                                        // in a name
	{`{"q":"hook-secret"}`, false},                                         // a literal secret
	{`{"q":"bad ` + "\xff" + ` byte"}`, false},                             // invalid UTF-8: decoding repairs it
	{`{"q":"lone \ud800 half"}`, false},                                    // so a lone surrogate
	{`{"n":1e400}`, false},                                                 // beyond float64: decoding refuses it
	{`[1,2]`, false},                                                       // not an object
	{`"text"`, false},                                                      // not an object
	{`null`, false},                                                        // not an object
	{`{"a":1`, false},                                                      // truncated
	{`{"a":1} x`, false},                                                   // trailing text
	{`{"a":01}`, false},                                                    // invalid number
	{`{"a":"tab	in string"}`, false},                                       // raw control character
	{`{"a":tru}`, false},                                                   // invalid literal
	{`{"a":1,}`, false},                                                    // trailing comma
	{`{"a":"\x"}`, false},                                                  // invalid escape
	{strings.Repeat(`{"a":`, 300) + "1" + strings.Repeat("}", 300), false}, // deeper than the in-place reader goes
}

// The in-place path writes exactly what decoding, redacting and encoding
// write, and its answer scrubber hides the same texts; the arguments it
// hands on are the decode path's.
func TestRawArgsAreTheDecodedArgs(t *testing.T) {
	s := scrubber()
	for _, tc := range rawCases {
		_, ok := s.RawCallArgs(json.RawMessage(tc.args))
		if ok != tc.inPlace {
			t.Errorf("%.60s: read in place %v, want %v", tc.args, ok, tc.inPlace)
		}
		checkSame(t, s, []byte(tc.args))
	}
}

func FuzzRawArgs(f *testing.F) {
	for _, tc := range rawCases {
		f.Add([]byte(tc.args))
	}
	s := scrubber()
	f.Fuzz(func(t *testing.T, raw []byte) { checkSame(t, s, raw) })
}

func checkSame(t *testing.T, s *redact.Scrubber, raw []byte) {
	t.Helper()
	want := s.DecodedCallArgs(raw)
	if len(raw) == 0 {
		want = &redact.CallArgs{Redacted: json.RawMessage(`{}`), Scrubber: s}
	}
	got := s.Call(&router.Call{}, raw)
	if string(got.Redacted) != string(want.Redacted) || got.Unreadable != want.Unreadable {
		t.Fatalf("%q:\nrecorded %s (%d)\ndecoding %s (%d)", raw, got.Redacted, got.Unreadable, want.Redacted, want.Unreadable)
	}
	if g, w := got.Scrubber.Needles(), want.Scrubber.Needles(); !slices.Equal(g, w) {
		t.Fatalf("%q: the answer's scrubber hides %q, decoding's %q", raw, g, w)
	}
	if json.Valid(raw) {
		var v map[string]any
		if json.Unmarshal(raw, &v) == nil && v != nil {
			enc, _ := json.Marshal(s.Value(v))
			if string(enc) != string(got.Redacted) {
				t.Fatalf("%q: recorded %s, Marshal of the redacted value %s", raw, got.Redacted, enc)
			}
		}
	}
}

// What the records keep of a call's arguments, read in place: secret
// keys masked at any depth, plain arguments whole, and the answer's
// scrubber hiding what the secret keys held.
func TestRawArgsMaskAndKeep(t *testing.T) {
	s := scrubber()
	deep := `{"a":{"b":[{"c":{"d":{"client_secret":"s3cr3t-value","n":7}}}]},"path":"/tmp/x <y> & z"}`
	a, ok := s.RawCallArgs(json.RawMessage(deep))
	if !ok {
		t.Fatal("plain nested arguments were not read in place")
	}
	if want := `{"a":{"b":[{"c":{"d":{"client_secret":"[REDACTED]","n":7}}}]},"path":"/tmp/x \u003cy\u003e \u0026 z"}`; string(a.Redacted) != want {
		t.Errorf("deep secret:\n%s\nwant\n%s", a.Redacted, want)
	}
	if out := a.Scrubber.String("echo s3cr3t-value ghp_planted123"); out != "echo [REDACTED] ${GH_TOKEN}" {
		t.Errorf("the answer's scrubber gives %q", out)
	}
	plain := `{"command":"ls -la","cwd":"/home/u","env":{"LANG":"C"},"timeout":30}`
	a = s.Call(&router.Call{}, json.RawMessage(plain))
	if string(a.Redacted) != plain {
		t.Errorf("plain arguments recorded as %s", a.Redacted)
	}
	if a.Scrubber != s {
		t.Error("arguments without secret keys got a scrubber of their own")
	}
	// A configured secret inside a string is scrubbed (by the decode
	// path, which the in-place one hands it to).
	a = s.Call(&router.Call{}, json.RawMessage(`{"q":"token is ghp_planted123","z":"hook-secret!"}`))
	if want := `{"q":"token is ${GH_TOKEN}","z":"[REDACTED]!"}`; string(a.Redacted) != want {
		t.Errorf("configured secrets: %s, want %s", a.Redacted, want)
	}
}

// A secret added by a reload is looked for by calls recorded after it.
func TestRawArgsSeeExtendedSecrets(t *testing.T) {
	s := scrubber()
	args := json.RawMessage(`{"q":"new-secret-value"}`)
	if a := s.Call(&router.Call{}, args); string(a.Redacted) != string(args) {
		t.Fatalf("before the reload: %s", a.Redacted)
	}
	s.Extend([]string{"new-secret-value", "${NEW}"})
	if a := s.Call(&router.Call{}, args); string(a.Redacted) != `{"q":"${NEW}"}` {
		t.Errorf("after the reload: %s", a.Redacted)
	}
}

// Huge arguments are recorded whole, as before, and invalid ones by
// their size.
func TestRawArgsHugeAndInvalid(t *testing.T) {
	s := scrubber()
	big, _ := json.Marshal(map[string]any{"content": strings.Repeat("line <é>\n", 200_000), "path": "/x"})
	a := s.Call(&router.Call{}, big)
	if want := s.DecodedCallArgs(big); string(a.Redacted) != string(want.Redacted) || len(a.Redacted) < 1_800_000 {
		t.Errorf("huge arguments: %d bytes recorded, decoding gives %d", len(a.Redacted), len(want.Redacted))
	}
	for _, bad := range []string{`{"a":`, `not json`, `[{"password":"pw-123456"}]`} {
		a := s.Call(&router.Call{}, json.RawMessage(bad))
		if a.Unreadable != len(bad) || string(a.Redacted) != `{"_unreadable_bytes":`+itoa(len(bad))+`}` {
			t.Errorf("%s: recorded %s (%d)", bad, a.Redacted, a.Unreadable)
		}
	}
	// An array is unreadable to the records, but the answer's scrubber
	// still hides what its objects hold under secret keys.
	a = s.Call(&router.Call{}, json.RawMessage(`[{"password":"pw-123456"}]`))
	if out := a.Scrubber.String("pw-123456"); out != redact.Mask {
		t.Errorf("secret inside array arguments: %q", out)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestRawArgsRandom compares the two paths on generated arguments: key
// orders, spacing, escapes of any character, names that are secret,
// numbers of every form, nesting.
func TestRawArgsRandom(t *testing.T) {
	s := scrubber()
	r := rand.New(rand.NewPCG(1, 2))
	inPlace := 0
	for range 20000 {
		var b []byte
		b = genObject(r, b, 0)
		if _, ok := s.RawCallArgs(b); ok {
			inPlace++
		}
		checkSame(t, s, b)
	}
	if inPlace < 15000 {
		t.Errorf("only %d of 20000 generated arguments were read in place", inPlace)
	}
}

var (
	genNames = []string{"a", "b", "query", "path", "Token", "api_key", "nested", "é", "a b", "x<y", "list", "pin",
		"keyboard", "n", "\u2028", "\"q\"", "ghp"}
	genTexts = []string{"", "plain", "with \"quotes\" and \\", "<html> & co", "日本語 🎉", "tab\tnew\nline",
		"\x00\x1f\x7f", "ghp_planted12", "ghp_planted123", "line\u2028sep", "/a/b"}
	genNumbers = []string{"0", "-0", "7", "-42", "1.5", "1e3", "2E-7", "123456789012345", "12345678901234567890",
		"0.1", "-0.0", "1e21", "3.0"}
)

func genSpace(r *rand.Rand, b []byte) []byte {
	if r.IntN(4) == 0 {
		return append(b, " \n\t\r"[r.IntN(4)])
	}
	return b
}

// genString writes s as a JSON string, escaping a random share of its
// characters in any of the ways JSON allows.
func genString(r *rand.Rand, b []byte, s string) []byte {
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', byte(c))
		case c < 0x20 || r.IntN(5) == 0:
			if c > 0xFFFF {
				hi, lo := utf16.EncodeRune(c)
				b = fmt.Appendf(b, `\u%04x\u%04X`, hi, lo)
			} else {
				b = fmt.Appendf(b, `\u%04x`, c)
			}
		case c == '/' && r.IntN(2) == 0:
			b = append(b, '\\', '/')
		default:
			b = utf8.AppendRune(b, c)
		}
	}
	return append(b, '"')
}

func genObject(r *rand.Rand, b []byte, depth int) []byte {
	b = append(genSpace(r, b), '{')
	n := r.IntN(5)
	for i, k := range r.Perm(len(genNames))[:n] {
		if i > 0 {
			b = append(b, ',')
		}
		b = genString(r, genSpace(r, b), genNames[k])
		b = append(genSpace(r, b), ':')
		b = genValue(r, genSpace(r, b), depth+1)
	}
	return append(genSpace(r, b), '}')
}

func genValue(r *rand.Rand, b []byte, depth int) []byte {
	switch k := r.IntN(8); {
	case k == 0 && depth < 4:
		return genObject(r, b, depth)
	case k == 1 && depth < 4:
		b = append(b, '[')
		for i := range r.IntN(4) {
			if i > 0 {
				b = append(b, ',')
			}
			b = genValue(r, genSpace(r, b), depth+1)
		}
		return append(b, ']')
	case k == 2:
		return append(b, genNumbers[r.IntN(len(genNumbers))]...)
	case k == 3:
		return append(b, []string{"true", "false", "null"}[r.IntN(3)]...)
	}
	return genString(r, b, genTexts[r.IntN(len(genTexts))])
}

// benchCallArgs are arguments as the proxy records them for every call:
// a small query, and a file edit with nested edits, escapes, numbers
// and a secret key.
var benchCallArgs = map[string][]byte{
	"small": []byte(`{"query":"read a file","limit":10}`),
	"edit": []byte(`{"path":"/home/user/project/src/main.go","dryRun":false,"mode":420,"tags":["go","edit","review"],"apiKey":"k-123",` +
		`"edits":[` + strings.Repeat(`{"oldText":"func main() {\n\tfmt.Println(\"hello\")\n}","newText":"func main() {\n\tlog.Print(\"hi\")\n}","line":12,"weight":0.75,"anchor":null},`, 20) +
		`{"oldText":"","newText":"// end\n","line":-1}],"options":{"backup":true,"encoding":"utf-8","limits":{"max":1e6,"min":0}}}`),
}

// BenchmarkRawCallArgs records arguments the in-place way, as every
// proxied call does.
func BenchmarkRawCallArgs(b *testing.B) {
	s := scrubber()
	for _, name := range []string{"small", "edit"} {
		in := json.RawMessage(benchCallArgs[name])
		if _, ok := s.RawCallArgs(in); !ok {
			b.Fatalf("%s: not read in place", name)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				s.RawCallArgs(in)
			}
		})
	}
}
