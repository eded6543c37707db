package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

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
	// is not passed on (the fast path's responses, see wire).
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
// but at most maxFrame bytes of it are kept.
func (j *jsonLines) next() ([]byte, error) {
	var line []byte
	over := 0
	var err error
	for {
		var chunk []byte
		chunk, err = j.br.ReadSlice('\n')
		if room := maxFrame - len(line); len(chunk) > room {
			over += len(chunk) - room
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
		fmt.Fprintf(j.log, "%sskipped a stdout line of more than %d bytes\n", j.prefix, maxFrame)
		msg = nil
	case len(msg) == 0:
	case !json.Valid(msg):
		fmt.Fprintf(j.log, "%sskipped a line on stdout that is not JSON-RPC: %s\n", j.prefix, clip(msg, 200))
		msg = nil
	case j.take != nil && j.take(msg):
		msg = nil
	default:
		if j.noted != nil && orderedLine(msg) {
			j.noted()
		}
		msg = append(msg, '\n')
	}
	return msg, err
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
