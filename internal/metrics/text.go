package metrics

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// family is one metric family of a scrape: its HELP, TYPE and series.
type family struct {
	name, typ, help string
	series          []sample
}

// sample is one line: the family's name plus suffix, its labels (name,
// value pairs, in the order they are written) and value.
type sample struct {
	suffix string
	labels []string
	value  float64
	// sortKey orders the series of a family: their labels without le,
	// then le's position, so a histogram's lines stay together in
	// bucket order.
	sortKey string
	order   int
}

// add appends a series; labels are name, value pairs.
func (f *family) add(suffix string, v float64, labels ...string) {
	f.series = append(f.series, sample{suffix: suffix, labels: labels, value: v, sortKey: labelKey(labels)})
}

// addHistogram appends one histogram's _bucket lines (cumulative, with
// le last), _sum and _count.
func (f *family) addHistogram(h *histogram, labels ...string) {
	key := labelKey(labels)
	var cum uint64
	for i, n := range h.counts {
		cum += n
		le := math.Inf(1)
		if i < len(latencyBuckets) {
			le = latencyBuckets[i]
		}
		f.series = append(f.series, sample{suffix: "_bucket", labels: append(slices.Clip(labels), "le", formatFloat(le)),
			value: float64(cum), sortKey: key, order: i})
	}
	f.series = append(f.series,
		sample{suffix: "_sum", labels: labels, value: h.sum, sortKey: key, order: len(h.counts)},
		sample{suffix: "_count", labels: labels, value: float64(cum), sortKey: key, order: len(h.counts) + 1})
}

// labelKey is the sort key of a label set: values in label order,
// separated by a byte no value holds once escaped.
func labelKey(labels []string) string {
	var b strings.Builder
	for i := 1; i < len(labels); i += 2 {
		b.WriteString(labels[i])
		b.WriteByte(0)
	}
	return b.String()
}

// appendText writes the family in the text format; nothing for a family
// without series, as the client library did.
func (f *family) appendText(b []byte) []byte {
	if len(f.series) == 0 {
		return b
	}
	slices.SortStableFunc(f.series, func(x, y sample) int {
		if c := strings.Compare(x.sortKey, y.sortKey); c != 0 {
			return c
		}
		return x.order - y.order
	})
	b = append(b, "# HELP "...)
	b = append(b, f.name...)
	b = append(b, ' ')
	b = appendEscaped(b, f.help, false)
	b = append(b, "\n# TYPE "...)
	b = append(b, f.name...)
	b = append(b, ' ')
	b = append(b, f.typ...)
	b = append(b, '\n')
	for _, s := range f.series {
		b = append(b, f.name...)
		b = append(b, s.suffix...)
		if len(s.labels) > 0 {
			b = append(b, '{')
			for i := 0; i+1 < len(s.labels); i += 2 {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, s.labels[i]...)
				b = append(b, `="`...)
				b = appendEscaped(b, s.labels[i+1], true)
				b = append(b, '"')
			}
			b = append(b, '}')
		}
		b = append(b, ' ')
		b = append(b, formatFloat(s.value)...)
		b = append(b, '\n')
	}
	return b
}

// appendEscaped escapes per the text format: backslash and newline in
// HELP text, and the double quote too in a label value. Invalid UTF-8 is
// replaced, since the format is UTF-8.
func appendEscaped(b []byte, s string, quote bool) []byte {
	s = strings.ToValidUTF8(s, "\uFFFD")
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// formatFloat writes a value as the client library did: shortest
// round-trip form, with Prometheus's spellings of the infinities.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
