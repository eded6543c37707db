package stdio_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/stdio"
)

// frames reads everything from fr: frames as strings, a too-large frame
// as "<too large N>".
func frames(t *testing.T, fr *stdio.FrameReader) []string {
	t.Helper()
	var out []string
	for {
		f, err := fr.Next()
		var tl *stdio.FrameTooLargeError
		switch {
		case errors.Is(err, io.EOF):
			return out
		case errors.As(err, &tl):
			out = append(out, "<too large "+itoa(tl.Size)+">")
		case err != nil:
			t.Fatal(err)
		default:
			out = append(out, string(f))
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestFrameReaderSplitsLinesAndSkipsBlankOnes(t *testing.T) {
	in := "one\r\n\n   \t\r\ntwo\n" + `{"x": 1}` + "\nlast without newline"
	got := frames(t, stdio.NewFrameReader(strings.NewReader(in), 0))
	want := []string{"one", "two", `{"x": 1}`, "last without newline"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("frames %q, want %q", got, want)
	}
}

func TestFrameReaderDropsAnOverlongLineAndReadsOn(t *testing.T) {
	in := "12345678\n123456789\n12345678\r\n" + strings.Repeat("x", 100) + "\r\nok\n" + strings.Repeat("y", 9)
	got := frames(t, stdio.NewFrameReader(strings.NewReader(in), 8))
	want := []string{"12345678", "<too large 9>", "12345678", "<too large 101>", "ok", "<too large 9>"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("frames %q, want %q", got, want)
	}
}

// endless yields n bytes of 'a' and no newline, without holding them.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), e.n)
	for i := range k {
		p[i] = 'a'
	}
	e.n -= k
	return int(k), nil
}

func TestFrameReaderHoldsAtMostOneFrame(t *testing.T) {
	const total = 256 << 20
	fr := stdio.NewFrameReader(io.MultiReader(&endless{n: total}, strings.NewReader("\n{}\n")), 1<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := fr.Next()
	runtime.ReadMemStats(&after)
	var tl *stdio.FrameTooLargeError
	if !errors.As(err, &tl) || tl.Size != total {
		t.Fatalf("err = %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("reading past a %d-byte line allocated %d bytes", total, grew)
	}
	if f, err := fr.Next(); err != nil || string(f) != "{}" {
		t.Errorf("next frame %q, %v", f, err)
	}
}

// FuzzFrameReader checks the frame reader, at limits from 1 to 4096
// bytes, against a plain model of the framing, and that every frame it
// yields is either decoded or rejected with a well-formed JSON-RPC error —
// never a panic.
func FuzzFrameReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, max uint16) {
		limit := int(max%4096) + 1
		var want []string
		lines := bytes.Split(data, []byte{'\n'})
		for i, line := range lines {
			if i == len(lines)-1 && len(line) == 0 {
				break
			}
			frame := bytes.TrimSuffix(line, []byte{'\r'})
			switch {
			case len(frame) > limit:
				want = append(want, "<too large "+itoa(int64(len(line)))+">")
			case len(bytes.TrimSpace(frame)) > 0:
				want = append(want, string(frame))
			}
		}
		fr := stdio.NewFrameReader(bytes.NewReader(data), limit)
		var got []string
		for {
			frame, err := fr.Next()
			var tl *stdio.FrameTooLargeError
			if errors.Is(err, io.EOF) {
				break
			} else if errors.As(err, &tl) {
				got = append(got, "<too large "+itoa(tl.Size)+">")
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(frame))
			checkDecode(t, frame)
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("frames %q, want %q", got, want)
		}
	})
}

func checkDecode(t *testing.T, frame []byte) {
	msg, rej := ingress.Decode(frame)
	if (msg == nil) == (rej == nil) {
		t.Fatalf("Decode(%q) = %v, %v", frame, msg, rej)
	}
	if rej == nil {
		if _, err := jsonrpc.EncodeMessage(msg); err != nil {
			t.Fatalf("Decode(%q) gave a message that does not encode: %v", frame, err)
		}
		return
	}
	var ans map[string]any
	if err := json.Unmarshal(rej.Answer(), &ans); err != nil {
		t.Fatalf("answer to %q is not JSON: %s", frame, rej.Answer())
	}
	e, _ := ans["error"].(map[string]any)
	if _, hasID := ans["id"]; !hasID || e == nil || (e["code"] != float64(ingress.CodeParseError) && e["code"] != float64(ingress.CodeInvalidRequest)) {
		t.Fatalf("answer to %q: %s", frame, rej.Answer())
	}
}
