package logging_test

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"testing/slogtest"

	"github.com/evokore/evokore/internal/logging"
)

// The handler keeps the slog.Handler contract (attributes, groups,
// WithAttrs and WithGroup, Resolve, empty attributes and groups ignored).
// It prints no time and no level word for Info on purpose (see the package
// doc): the parser checks they are absent and puts them back, as slogtest
// asks of a handler that drops them.
func TestHandlerKeepsTheSlogContract(t *testing.T) {
	var buf bytes.Buffer
	slogtest.Run(t, func(*testing.T) slog.Handler {
		buf.Reset()
		return logging.NewHandler(&buf, slog.LevelInfo)
	}, func(t *testing.T) map[string]any {
		return parseLine(t, buf.String())
	})
}

// parseLine reads one line the handler wrote: a one-word message (as
// slogtest's are) and key=value pairs, a dotted key standing for groups.
func parseLine(t *testing.T, line string) map[string]any {
	t.Helper()
	line, ok := strings.CutSuffix(line, "\n")
	if !ok || strings.Contains(line, "\n") {
		t.Fatalf("not one line: %q", line)
	}
	msg, rest, _ := strings.Cut(line, " ")
	m := map[string]any{slog.MessageKey: msg}
	for rest != "" {
		key, after, ok := strings.Cut(rest, "=")
		if !ok || key == "" || strings.Contains(key, " ") {
			t.Fatalf("no key=value at %q in %q", rest, line)
		}
		var val string
		if strings.HasPrefix(after, `"`) {
			q, err := strconv.QuotedPrefix(after)
			if err != nil {
				t.Fatalf("bad quoting at %q: %v", after, err)
			}
			val, _ = strconv.Unquote(q)
			after = after[len(q):]
		} else {
			val, after, _ = strings.Cut(after, " ")
			after = " " + after
		}
		rest = strings.TrimPrefix(after, " ")
		groups := strings.Split(key, ".")
		into := m
		for _, g := range groups[:len(groups)-1] {
			sub, ok := into[g].(map[string]any)
			if !ok {
				sub = map[string]any{}
				into[g] = sub
			}
			into = sub
		}
		into[groups[len(groups)-1]] = val
	}
	for _, k := range []string{slog.TimeKey, slog.LevelKey} {
		if _, ok := m[k]; ok {
			t.Errorf("the line prints %s: %q", k, line)
		}
		// A record without a time has none to drop.
		if k != slog.TimeKey || !strings.HasSuffix(t.Name(), "/zero-time") {
			m[k] = "dropped on purpose"
		}
	}
	return m
}
