package metrics_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http/httptest"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/metrics"
	"github.com/evokore/evokore/internal/router"
)

// parsed is one sample of a scrape.
type parsed struct {
	name   string
	labels map[string]string
	value  float64
}

var (
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// parseExposition is a strict reader of the text format 0.0.4, written
// from the format's description rather than from the writer: HELP and
// TYPE at most once per family and before its samples, a family's lines
// together, only the three escapes, valid names, no repeated series, and
// for histograms, buckets cumulative in increasing le up to +Inf, which
// equals _count.
func parseExposition(text string) ([]parsed, error) {
	if !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("the text does not end in a newline")
	}
	types := map[string]string{}
	helped := map[string]bool{}
	done := map[string]bool{} // families whose lines are over
	current := ""
	seen := map[string]bool{}
	var out []parsed
	enter := func(fam string) error {
		if fam != current {
			if done[fam] {
				return fmt.Errorf("family %s's lines are not together", fam)
			}
			if current != "" {
				done[current] = true
			}
			current = fam
		}
		return nil
	}
	for n, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("line %d %q: %s", n+1, line, fmt.Sprintf(format, args...))
		}
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			kw, rest, _ := strings.Cut(rest, " ")
			name, arg, _ := strings.Cut(rest, " ")
			if !metricName.MatchString(name) {
				return nil, fail("metric name")
			}
			if err := enter(name); err != nil {
				return nil, fail("%v", err)
			}
			switch kw {
			case "HELP":
				if helped[name] {
					return nil, fail("second HELP")
				}
				helped[name] = true
				if _, err := unescape(arg, false); err != nil {
					return nil, fail("%v", err)
				}
			case "TYPE":
				if _, ok := types[name]; ok {
					return nil, fail("second TYPE")
				}
				if !slices.Contains([]string{"counter", "gauge", "histogram", "summary", "untyped"}, arg) {
					return nil, fail("type %q", arg)
				}
				for _, s := range out {
					if family(s.name, types) == name || s.name == name {
						return nil, fail("TYPE after the family's samples")
					}
				}
				types[name] = arg
			}
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			return nil, fail("not a sample")
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fail("%v", err)
		}
		fam := family(s.name, types)
		if types[fam] == "" {
			return nil, fail("sample before its family's TYPE")
		}
		if err := enter(fam); err != nil {
			return nil, fail("%v", err)
		}
		id := s.name + fmt.Sprint(s.labels) // fmt sorts map keys
		if seen[id] {
			return nil, fail("repeated series")
		}
		seen[id] = true
		out = append(out, s)
	}
	return out, checkHistograms(out, types)
}

// family is the family a sample's name belongs to: a histogram's
// _bucket, _sum and _count lines belong to it.
func family(name string, types map[string]string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && types[base] == "histogram" {
			return base
		}
	}
	return name
}

// parseSample reads name{label="value",...} value.
func parseSample(line string) (parsed, error) {
	s := parsed{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return s, fmt.Errorf("no value")
	}
	s.name, line = line[:i], line[i:]
	if !metricName.MatchString(s.name) {
		return s, fmt.Errorf("metric name %q", s.name)
	}
	if strings.HasPrefix(line, "{") {
		line = line[1:]
		for !strings.HasPrefix(line, "}") {
			eq := strings.Index(line, `="`)
			if eq < 0 {
				return s, fmt.Errorf("label without =\"")
			}
			name := line[:eq]
			if !labelName.MatchString(name) {
				return s, fmt.Errorf("label name %q", name)
			}
			if _, dup := s.labels[name]; dup {
				return s, fmt.Errorf("label %s twice", name)
			}
			// The value runs to the first unescaped quote.
			j, rest := 0, line[eq+2:]
			for ; j < len(rest) && rest[j] != '"'; j++ {
				if rest[j] == '\\' {
					j++
				}
			}
			if j >= len(rest) {
				return s, fmt.Errorf("unterminated label value")
			}
			v, err := unescape(rest[:j], true)
			if err != nil {
				return s, err
			}
			s.labels[name] = v
			line = rest[j+1:]
			if strings.HasPrefix(line, ",") {
				line = line[1:]
			} else if !strings.HasPrefix(line, "}") {
				return s, fmt.Errorf("no , or } after a label")
			}
		}
		line = line[1:]
	}
	if !strings.HasPrefix(line, " ") {
		return s, fmt.Errorf("no space before the value")
	}
	fields := strings.Split(line[1:], " ")
	if len(fields) > 2 {
		return s, fmt.Errorf("trailing text")
	}
	v, err := parseValue(fields[0])
	if err != nil {
		return s, err
	}
	s.value = v
	return s, nil
}

// parseValue reads a Go float, or Prometheus's +Inf, -Inf and NaN.
func parseValue(v string) (float64, error) {
	switch v {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	if strings.ContainsAny(v, "IiNn") { // ParseFloat's other spellings
		return 0, fmt.Errorf("value %q", v)
	}
	return strconv.ParseFloat(v, 64)
}

// unescape undoes \\ and \n, and \" in a label value; any other escape,
// a raw newline, or a raw quote in a label value is an error.
func unescape(s string, label bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n' || c == '"' && label:
			return "", fmt.Errorf("raw %q in %q", c, s)
		case c != '\\':
			b.WriteByte(c)
		case i+1 >= len(s):
			return "", fmt.Errorf("dangling backslash in %q", s)
		default:
			i++
			switch s[i] {
			case '\\':
				b.WriteByte('\\')
			case 'n':
				b.WriteByte('\n')
			case '"':
				if !label {
					return "", fmt.Errorf(`\" in HELP text`)
				}
				b.WriteByte('"')
			default:
				return "", fmt.Errorf("escape \\%c in %q", s[i], s)
			}
		}
	}
	return b.String(), nil
}

// checkHistograms checks each histogram series' buckets.
func checkHistograms(samples []parsed, types map[string]string) error {
	type series struct {
		les    []float64
		counts []float64
		count  float64
		hasSum bool
	}
	all := map[string]*series{}
	get := func(fam string, labels map[string]string) *series {
		l := map[string]string{}
		for k, v := range labels {
			if k != "le" {
				l[k] = v
			}
		}
		id := fam + fmt.Sprint(l)
		if all[id] == nil {
			all[id] = &series{count: -1}
		}
		return all[id]
	}
	for _, s := range samples {
		fam := family(s.name, types)
		if types[fam] != "histogram" {
			continue
		}
		h := get(fam, s.labels)
		switch s.name {
		case fam + "_bucket":
			le, ok := s.labels["le"]
			if !ok {
				return fmt.Errorf("%s bucket without le", fam)
			}
			v, err := parseValue(le)
			if err != nil {
				return err
			}
			h.les, h.counts = append(h.les, v), append(h.counts, s.value)
		case fam + "_sum":
			h.hasSum = true
		case fam + "_count":
			h.count = s.value
		default:
			return fmt.Errorf("%s in histogram %s", s.name, fam)
		}
	}
	for id, h := range all {
		switch {
		case len(h.les) == 0 || !math.IsInf(h.les[len(h.les)-1], 1):
			return fmt.Errorf("%s: no +Inf bucket last", id)
		case !h.hasSum || h.count < 0:
			return fmt.Errorf("%s: no _sum or _count", id)
		case h.counts[len(h.counts)-1] != h.count:
			return fmt.Errorf("%s: +Inf bucket %v, _count %v", id, h.counts[len(h.counts)-1], h.count)
		}
		for i := 1; i < len(h.les); i++ {
			if h.les[i] <= h.les[i-1] || h.counts[i] < h.counts[i-1] {
				return fmt.Errorf("%s: bucket le=%v (%v) after le=%v (%v)", id, h.les[i], h.counts[i], h.les[i-1], h.counts[i-1])
			}
		}
	}
	return nil
}

// scrape serves /metrics once and parses it strictly.
func scrape(t *testing.T, m *metrics.Metrics) []parsed {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	body, _ := io.ReadAll(rec.Body)
	samples, err := parseExposition(string(body))
	if err != nil {
		t.Fatalf("not a valid exposition: %v\n%s", err, body)
	}
	return samples
}

// find returns the value of the sample with that name and labels.
func find(samples []parsed, name string, labels map[string]string) (float64, bool) {
	for _, s := range samples {
		if s.name == name && fmt.Sprint(s.labels) == fmt.Sprint(labels) {
			return s.value, true
		}
	}
	return 0, false
}

// A scrape parses as the text format even when tool names hold the
// characters it escapes, and the names read back as they were.
func TestExpositionEscapesLabelValues(t *testing.T) {
	m := metrics.New(metrics.Gauges{Sessions: func() int { return 1 }, ChildrenUp: func() int { return 0 }, PendingApprovals: func() int { return 0 }})
	m.Counting("rate_limit", router.StageFunc(func(context.Context, *router.Call) (*mcp.CallToolResult, error) { return nil, nil }))
	names := []string{`quote"d`, `back\slash`, "new\nline", `all\"` + "\n" + `\n`, "plain", "ünïcode", "bad\xffutf8"}
	for _, n := range names {
		m.Observe(context.Background(), router.Outcome{Call: &router.Call{Entry: &catalog.Entry{Name: n, Server: n}, Started: time.Now()}})
	}
	samples := scrape(t, m)
	for _, n := range names {
		want := strings.ToValidUTF8(n, "\uFFFD")
		if v, ok := find(samples, "evokore_tool_calls_total", map[string]string{"tool": want, "server": want, "outcome": "ok"}); !ok || v != 1 {
			t.Errorf("tool %q: %v %v", n, v, ok)
		}
		if v, ok := find(samples, "evokore_tool_call_duration_seconds_count", map[string]string{"server": want}); !ok || v != 1 {
			t.Errorf("latency of %q: %v %v", n, v, ok)
		}
	}
	if v, ok := find(samples, "evokore_call_rejections_total", map[string]string{"reason": "rate_limit"}); !ok || v != 0 {
		t.Errorf("a wrapped stage's reason is not at 0: %v %v", v, ok)
	}
}

// The duration histogram's buckets are cumulative, each call in the
// first bucket whose bound is not below it and in every one above.
func TestHistogramBucketsAreCumulative(t *testing.T) {
	m := metrics.New(metrics.Gauges{})
	for _, d := range []time.Duration{300 * time.Microsecond, 3 * time.Millisecond, 3 * time.Millisecond, 2 * time.Second, 100 * time.Second} {
		m.Observe(context.Background(), router.Outcome{Call: &router.Call{Entry: &catalog.Entry{Name: "t", Server: "fx"}, Started: time.Now().Add(-d)}, Result: &mcp.CallToolResult{}})
	}
	samples := scrape(t, m)
	for le, want := range map[string]float64{"0.0005": 1, "0.001": 1, "0.0025": 1, "0.005": 3, "1": 3, "2.5": 4, "60": 4, "+Inf": 5} {
		if v, ok := find(samples, "evokore_tool_call_duration_seconds_bucket", map[string]string{"server": "fx", "le": le}); !ok || v != want {
			t.Errorf("le=%s: %v (%v), want %v", le, v, ok, want)
		}
	}
	if v, _ := find(samples, "evokore_tool_call_duration_seconds_sum", map[string]string{"server": "fx"}); v < 102.006 || v > 103 {
		t.Errorf("sum %v", v)
	}
}

// The runtime's and the process's series are read at each scrape.
func TestRuntimeAndProcessSeries(t *testing.T) {
	samples := scrape(t, metrics.New(metrics.Gauges{}))
	want := []string{"go_goroutines", "go_threads", "go_memstats_heap_alloc_bytes", "go_memstats_alloc_bytes_total", "go_memstats_sys_bytes"}
	if runtime.GOOS == "linux" {
		want = append(want, "process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds", "process_max_fds", "process_start_time_seconds")
	}
	for _, name := range want {
		if v, ok := find(samples, name, map[string]string{}); !ok || v <= 0 {
			t.Errorf("%s = %v (%v)", name, v, ok)
		}
	}
	if v, ok := find(samples, "go_info", map[string]string{"version": runtime.Version()}); !ok || v != 1 {
		t.Errorf("go_info: %v %v", v, ok)
	}
	if runtime.GOOS == "linux" {
		start, _ := find(samples, "process_start_time_seconds", map[string]string{})
		if now := float64(time.Now().Unix()); start > now+1 || start < now-3600 {
			t.Errorf("process_start_time_seconds %v, now %v", start, now)
		}
	}
}

// The strict reader refuses what it should, or the tests above would
// prove nothing.
func TestTheExpositionReaderIsStrict(t *testing.T) {
	head := "# TYPE a counter\n"
	hist := "# TYPE h histogram\n"
	for _, bad := range []string{
		head + "a 1",                     // no final newline
		"a 1\n",                          // no TYPE
		head + `a{l="x"y"} 1` + "\n",     // raw quote
		head + `a{l="x\t"} 1` + "\n",     // unknown escape
		head + `a{l="1",l="2"} 1` + "\n", // label twice
		head + "a 1\na 2\n",              // repeated series
		head + "a 1\n# TYPE b gauge\nb 1\na{x=\"1\"} 1\n", // family not together
		head + "a one\n", // value
		hist + `h_bucket{le="1"} 2` + "\n" + `h_bucket{le="+Inf"} 1` + "\nh_sum 1\nh_count 1\n", // not cumulative
		hist + `h_bucket{le="1"} 1` + "\nh_sum 1\nh_count 1\n",                                  // no +Inf
		hist + `h_bucket{le="+Inf"} 2` + "\nh_sum 1\nh_count 1\n",                               // +Inf != count
	} {
		if _, err := parseExposition(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if _, err := parseExposition(hist + `h_bucket{le="1"} 1` + "\n" + `h_bucket{le="+Inf"} 2` + "\nh_sum 1\nh_count 2\n"); err != nil {
		t.Errorf("refused a valid histogram: %v", err)
	}
}
