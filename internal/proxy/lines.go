package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/evokore/evokore/internal/rawjson"
)

// maxFrame bounds one JSON-RPC message from a child, as the SDK's own
// reader does; a longer line is dropped whole.
const maxFrame = 16 << 20

// jsonLines sits between a child's stdout and the MCP transport and lets
// through only lines that are JSON, one message per line as the stdio
// transport defines it. Anything else (a banner, a stray print) is logged
// on the router's stderr and skipped, as the TypeScript SDK's stdio client
// does, instead of ending the connection.
type jsonLines struct {
	src    io.ReadCloser
	br     *bufio.Reader
	log    io.Writer
	prefix string

	// take, when set, is offered each JSON line first; a line it takes
	// is not passed on (the responses to the wire's calls).
	take func([]byte) bool
	// ended, when set, is called once when the output ends.
	ended func()
	// noted, when set, is called for each call's log message or progress
	// it passes on (noteOrder's count of what was read), before it reads
	// further: a result the wire takes after it is then known to follow
	// it, however far the SDK's decoder is behind.
	noted func()

	mu      sync.Mutex
	pending []byte
	err     error
}

func newJSONLines(src io.ReadCloser, log io.Writer, prefix string) *jsonLines {
	return &jsonLines{src: src, br: bufio.NewReaderSize(src, 64<<10), log: log, prefix: prefix}
}

// Read hands out the next JSON line (with its newline), skipping the rest.
func (j *jsonLines) Read(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for len(j.pending) == 0 {
		if j.err != nil {
			return 0, j.err
		}
		j.pending, j.err = j.next()
		if j.err != nil && j.ended != nil {
			j.ended()
			j.ended = nil
		}
	}
	n := copy(p, j.pending)
	j.pending = j.pending[n:]
	return n, nil
}

// next reads one line and returns it when it is JSON; otherwise it logs
// and returns nothing. The line is read to its end whatever its length,
// but at most maxFrame bytes of it are kept (and its last bytes, where
// the id of a response may be).
//
// A JSON line whose strings hold invalid UTF-8 is passed on with each
// bad byte replaced by U+FFFD, which is what decoding it gives
// (encoding/json, the go-sdk, JSON.parse of the line read as UTF-8), so
// that the router and every client read the same text and what goes on
// is JSON as RFC 8259 defines it.
//
// A line that is dropped (not JSON, or over the limit) but reads as a
// response (an id and no method) is not left to time out: in its place
// goes an error response under the same id, saying why. The wire takes it
// for one of its calls; the SDK's client settles its own (integer)
// request, and ignores an id it is not waiting for.
func (j *jsonLines) next() ([]byte, error) {
	var line, tail []byte
	over := 0
	var err error
	for {
		var chunk []byte
		chunk, err = j.br.ReadSlice('\n')
		if room := maxFrame - len(line); len(chunk) > room {
			over += len(chunk) - room
			tail = keepTail(tail, chunk[room:])
			chunk = chunk[:room]
		}
		line = append(line, chunk...)
		if err != bufio.ErrBufferFull {
			break
		}
	}
	msg := bytes.TrimSpace(line)
	switch {
	case over > 0:
		fmt.Fprintf(j.log, "%sskipped a stdout line of more than %d bytes%s\n", j.prefix, maxFrame, j.answered(&msg, bytes.TrimSpace(tail), MsgAnswerTooLong(j.server(), maxFrame)))
	case len(msg) == 0:
		return nil, err
	case !json.Valid(msg):
		shown := clip(msg, 200)
		fmt.Fprintf(j.log, "%sskipped a line on stdout that is not JSON-RPC: %s%s\n", j.prefix, shown, j.answered(&msg, nil, MsgAnswerNotJSON(j.server())))
	case !utf8.Valid(msg):
		msg = repairUTF8(msg)
	}
	if msg == nil || j.take != nil && j.take(msg) {
		return nil, err
	}
	if j.noted != nil && orderedLine(msg) {
		j.noted()
	}
	return append(msg, '\n'), err
}

// answered replaces the dropped line *msg with an error response saying
// why under the line's id, when the line reads as a response, or with
// nil; it returns what the log line adds.
func (j *jsonLines) answered(msg *[]byte, tail []byte, why string) string {
	id := responseID(*msg, tail)
	if id == nil {
		*msg = nil
		return ""
	}
	out := make([]byte, 0, len(id)+len(why)+80)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"error":{"code":-32603,"message":`...)
	out = rawjson.Quote(out, why)
	out = append(out, "}}"...)
	*msg = out
	return fmt.Sprintf(" (it answered request %s: answered with an error instead)", id)
}

// server is the child's id, from the log prefix "[id] ".
func (j *jsonLines) server() string {
	return strings.TrimSuffix(strings.TrimPrefix(j.prefix, "["), "] ")
}

// tailKeep is how many of the last bytes of an over-long line are kept:
// enough for a final "id" member.
const tailKeep = 256

func keepTail(tail, more []byte) []byte {
	if len(more) >= tailKeep {
		return append(tail[:0], more[len(more)-tailKeep:]...)
	}
	tail = append(tail, more...)
	if len(tail) > tailKeep {
		tail = append(tail[:0], tail[len(tail)-tailKeep:]...)
	}
	return tail
}

// repairUTF8 replaces each byte of b that is not part of valid UTF-8 with
// U+FFFD, as encoding/json does when it decodes a string. In JSON that
// json.Valid accepted such bytes can only be inside strings, so the
// result is still valid JSON.
func repairUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}

// finalID matches a last member "id" at the end of a line.
var finalID = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"[^"\\]*")\s*\}$`)

// responseID reads the id of a line that could not be passed on (not
// JSON, or cut at maxFrame with tail its last bytes) when the line reads
// as a response. Its top-level members are read leniently (a string ends
// at its next unescaped quote, whatever it holds): "method" or "params"
// make it a request or a notification, whose id is the child's own;
// "result" or "error" a response. When the members cannot be read to the
// end, a "method" in what is left counts unless "result" or "error" came
// first, and the id may be the last member, in tail. Only ids that can
// answer one of ours count: an integer (the SDK's) or a string with the
// wire's prefix. It returns the id as JSON, or nil.
func responseID(head, tail []byte) []byte {
	m, ok := looseMembers(head)
	if !ok || m.request {
		return nil
	}
	id := m.id
	if !m.complete {
		method := []byte(`"method"`)
		if !m.response && (bytes.Contains(head[m.end:], method) || bytes.Contains(tail, method)) {
			return nil
		}
		if id == nil && tail != nil {
			if f := finalID.FindSubmatch(tail); f != nil {
				id = f[1]
			}
		}
	}
	return answerable(id)
}

// loose is what looseMembers read of a line's top-level members.
type loose struct {
	id []byte
	// request is set by a "method" or "params", response by a "result"
	// or "error"; complete when the members were read to the object's
	// end, else end is where the reading stopped.
	request, response, complete bool
	end                         int
}

// looseMembers reads the top-level members of the object in b leniently
// (looseValueEnd), up to its end or the first thing it cannot read; ok
// is false when b is not an object.
func looseMembers(b []byte) (m loose, ok bool) {
	i := rawjson.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return m, false
	}
	for i = rawjson.SkipSpace(b, i+1); i < len(b); {
		if b[i] == '}' {
			m.complete = true
			break
		}
		if b[i] != '"' {
			break
		}
		e := looseValueEnd(b, i)
		if e < 0 {
			break
		}
		name := string(b[i+1 : e-1])
		if i = rawjson.SkipSpace(b, e); i >= len(b) || b[i] != ':' {
			break
		}
		switch name {
		case "method", "params":
			m.request = true
			return m, true
		case "result", "error":
			m.response = true
		}
		i = rawjson.SkipSpace(b, i+1)
		if e = looseValueEnd(b, i); e < 0 {
			break
		}
		if name == "id" {
			m.id = b[i:e]
		}
		if i = rawjson.SkipSpace(b, e); i < len(b) && b[i] == ',' {
			i = rawjson.SkipSpace(b, i+1)
		}
	}
	m.end = min(i, len(b))
	return m, true
}

// answerable is id when it can answer a request of ours: an integer (the
// SDK's) or a string with the wire's prefix; nil otherwise.
func answerable(id []byte) []byte {
	switch {
	case len(id) == 0:
		return nil
	case id[0] == '"':
		if s, ok := rawjson.String(id); ok && strings.HasPrefix(s, wireIDPrefix) && json.Valid(id) {
			return id
		}
	case len(id) <= 20:
		if _, ok := rawjson.Int(id); ok {
			return id
		}
	}
	return nil
}

// looseValueEnd returns the index just past the value at b[i], read
// leniently: a string ends at its next unescaped quote, an object or an
// array at its matching bracket, outside strings; anything else at the
// next comma, bracket or space. It returns -1 when b ends first.
func looseValueEnd(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			j++
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(b) {
				return -1
			}
			if depth == 0 {
				return j + 1
			}
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return j
			}
			if depth--; depth == 0 {
				return j + 1
			}
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n'):
			return j
		}
	}
	if depth == 0 && len(b) > i {
		return len(b)
	}
	return -1
}

// orderedLine reports whether msg is a notification a call's result must
// not overtake (orderedMethod).
func orderedLine(msg []byte) bool {
	if !bytes.Contains(msg, []byte("notifications/")) || rawjson.Member(msg, "id") != nil {
		return false
	}
	method, ok := rawjson.String(rawjson.Member(msg, "method"))
	return ok && orderedMethod(method)
}

// Close closes the child's stdout.
func (j *jsonLines) Close() error { return j.src.Close() }

// clip shortens b for a log line.
func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return fmt.Sprintf("%s… [%d bytes]", b[:n], len(b))
}
