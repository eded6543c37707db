package codemode

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/evokore/evokore/internal/jsonenc"
)

// The router and its sandbox speak newline-delimited JSON over the
// sandbox's stdin and stdout, one frame a line.
//
//	router → sandbox: start (once, first), then one reply per call
//	sandbox → router: call, log, then done (once, last)
//
// The sandbox runs the model's program, so the router trusts nothing it
// sends: a frame is bounded (maxFrame), a malformed one ends the run.

// start is the router's first frame: the program and its limits.
type start struct {
	Code   string `json:"code"`
	Limits Limits `json:"limits"`
}

// reply answers one call: the tool's structured result, or the error
// the program's promise rejects with.
type reply struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// message is what the sandbox sends: exactly one of its fields is set.
type message struct {
	Call *callFrame `json:"call,omitempty"`
	Log  *string    `json:"log,omitempty"`
	Done *done      `json:"done,omitempty"`
}

type callFrame struct {
	ID   int             `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// done is how the program ended: its returned value as JSON, or the
// error it threw.
type done struct {
	Value json.RawMessage `json:"value,omitempty"`
	Error string          `json:"error,omitempty"`
}

// maxFrame bounds one frame either way: a tool's arguments or result,
// a log line, the returned value.
const maxFrame = 16 << 20

var errFrameTooLarge = fmt.Errorf("a frame over %d bytes", maxFrame)

// frameReader reads one frame at a time, refusing any over maxFrame.
type frameReader struct{ r *bufio.Reader }

func newFrameReader(r io.Reader) *frameReader { return &frameReader{bufio.NewReaderSize(r, 64<<10)} }

func (f *frameReader) next(v any) error {
	var line []byte
	for {
		chunk, err := f.r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxFrame {
			return errFrameTooLarge
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if err == io.EOF && len(line) > 0 {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return json.Unmarshal(line, v)
}

func writeFrame(w io.Writer, v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// marshal is jsonenc.Marshal: what a program returns reaches the model
// as text, where \u003c for < would be five more bytes of its context
// and of the output bound.
var marshal = jsonenc.Marshal
