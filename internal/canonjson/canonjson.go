// Package canonjson renders JSON canonically: object keys sorted at every
// depth, no insignificant whitespace, array order kept. Two arguments that
// differ only in key order render to the same bytes, which is what hashes
// of tool definitions, approval tokens and cooldown keys need.
package canonjson

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// Marshal renders v canonically. v is first marshalled with encoding/json,
// so any value it accepts works.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return FromJSON(raw, "")
}

// FromJSON renders raw JSON canonically. When drop is not empty, a
// top-level object key of that name is left out (the approval token is
// never part of what it approves). Numbers keep their written form.
func FromJSON(raw []byte, drop string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if m, ok := v.(map[string]any); ok && drop != "" {
		delete(m, drop)
	}
	var buf bytes.Buffer
	write(&buf, v)
	return buf.Bytes(), nil
}

func write(buf *bytes.Buffer, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			write(buf, x[k])
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			write(buf, e)
		}
		buf.WriteByte(']')
	case string:
		writeString(buf, x)
	case json.Number:
		buf.WriteString(canonicalNumber(x))
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	case nil:
		buf.WriteString("null")
	}
}

// canonicalNumber writes integers as integers and everything else in Go's
// shortest float form, so 1.0 and 1 agree.
func canonicalNumber(n json.Number) string {
	if i, err := n.Int64(); err == nil {
		return strconv.FormatInt(i, 10)
	}
	if f, err := n.Float64(); err == nil {
		if f == float64(int64(f)) && f < 1e15 && f > -1e15 {
			return strconv.FormatInt(int64(f), 10)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return n.String()
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s)
	buf.Write(b)
}
