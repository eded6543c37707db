package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

func TestShowArguments(t *testing.T) {
	for _, tc := range []struct {
		name, args, want string
	}{
		{"none", ``, ""},
		{"null", `null`, ""},
		{"empty", `{}`, ""},
		{"one to a line, in name order", `{"b":2,"a":"x"}`, "\"a\": \"x\"\n\"b\": 2"},
		{"numbers as written", `{"n":12345678901234567890,"f":1.50}`, "\"f\": 1.50\n\"n\": 12345678901234567890"},
		{"secrets at any depth", `{"password":"p","opts":{"auth":{"user":"u"},"list":[{"token":"t"}]}}`,
			"\"opts\": {\"auth\":\"[redacted]\",\"list\":[{\"token\":\"[redacted]\"}]}\n\"password\": \"[redacted]\""},
		{"the approval token is not an argument", `{"` + TokenField + `":"abc","x":1}`, `"x": 1`},
		{"HTML as it is", `{"q":"<a & b>"}`, `"q": "<a & b>"`},
		{"controls escaped", "{\"\\u001b]0;t\\u0007\":\"\u2066x\u007f\"}", `"\u001b]0;t\u0007": "\u2066x\u007f"`},
		{"not an object", `[1,2]`, `[1,2]`},
		{"unreadable", "{\"a\":\x01", "(unreadable arguments) {\"a\":\\u0001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ShowArguments(json.RawMessage(tc.args)); got != tc.want {
				t.Errorf("ShowArguments(%s)\n got %q\nwant %q", tc.args, got, tc.want)
			}
		})
	}
}

// A long value is cut where it says, and every argument after it is still
// shown: what is not shown would run unseen.
func TestShowArgumentsCutsValuesNotArguments(t *testing.T) {
	long := strings.Repeat("é", shownValue+25)
	got := ShowArguments(json.RawMessage(`{"a":"` + long + `","z":"/etc/shadow"}`))
	lines := strings.Split(got, "\n")
	if len(lines) != 2 || lines[1] != `"z": "/etc/shadow"` {
		t.Fatalf("the argument after a long one is not shown:\n%s", got)
	}
	// The value shown is its quote and shownValue-1 characters of it.
	if !strings.HasSuffix(lines[0], "… [27 more characters not shown]") || !strings.HasPrefix(lines[0], `"a": "`+long[:2*(shownValue-1)]+"…") {
		t.Errorf("cut value = %.40q … %q", lines[0], lines[0][len(lines[0])-40:])
	}
}

// Past shownTotal the arguments left are counted, so the human knows
// there is more than is shown.
func TestShowArgumentsCountsWhatDoesNotFit(t *testing.T) {
	args := map[string]string{}
	for i := range 20 {
		args[fmt.Sprintf("k%02d", i)] = strings.Repeat("v", shownValue)
	}
	raw, _ := json.Marshal(args)
	got := ShowArguments(raw)
	if len(got) > shownTotal+100 {
		t.Errorf("shown %d bytes, bound %d", len(got), shownTotal)
	}
	shown := strings.Count(got, "\n")
	if want := fmt.Sprintf("… [%d more arguments not shown]", 20-shown); !strings.HasSuffix(got, want) {
		t.Errorf("want the rest counted (%s), got the end %q", want, got[len(got)-60:])
	}
	for _, r := range got {
		if r != ' ' && r != '\n' && !unicode.IsGraphic(r) {
			t.Fatalf("shown %U", r)
		}
	}
}
