package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxFrame is the largest frame the router reads, in bytes, not counting
// its line ending. It matches the go-sdk's default line cap.
const MaxFrame = 16 << 20

// FrameTooLargeError reports a line longer than the reader's limit. The
// line was read to its end and dropped, so the next frame starts clean.
type FrameTooLargeError struct {
	// Size is the length of the dropped line up to its "\n" (a "\r"
	// before it counts).
	Size int64
	// Limit is the reader's limit.
	Limit int
}

func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("frame of %d bytes exceeds the %d-byte limit", e.Size, e.Limit)
}

// FrameReader splits a byte stream into newline-delimited frames, the MCP
// stdio framing. It holds at most one frame (up to its limit) in memory:
// an overlong line is skipped in chunks and reported as a
// *FrameTooLargeError, after which reading goes on with the next line.
// Blank lines are skipped and a trailing "\r" is dropped.
//
// A FrameReader knows nothing of JSON: it is stdio's framing, and the
// Conn of this package hands each frame to the byte path (ingress.Scan)
// or to ingress.Decode, which turns it into a message or a rejection.
// It is not safe for concurrent use.
type FrameReader struct {
	br    *bufio.Reader
	limit int
	buf   []byte
}

// NewFrameReader reads frames of at most limit bytes from r; limit <= 0
// means MaxFrame.
func NewFrameReader(r io.Reader, limit int) *FrameReader {
	if limit <= 0 {
		limit = MaxFrame
	}
	return &FrameReader{br: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// Next returns the next non-blank frame without its line ending. The
// slice is the caller's: the reader never touches it again. At the end of
// input a last unterminated frame is returned first, then io.EOF.
func (fr *FrameReader) Next() ([]byte, error) {
	for {
		frame, err := fr.line()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(frame)) > 0 {
			return frame, nil
		}
	}
}

// line reads one line; it returns io.EOF only when no byte was left.
func (fr *FrameReader) line() ([]byte, error) {
	fr.buf = fr.buf[:0]
	defer func() {
		if cap(fr.buf) > 1<<20 {
			fr.buf = nil
		}
	}()
	var size int64
	tooLarge := false
	for {
		chunk, err := fr.br.ReadSlice('\n')
		size += int64(len(chunk))
		if !tooLarge {
			// Keep room for a "\r\n" ending: past limit+2 bytes the line
			// itself is too long whatever its ending.
			if len(fr.buf)+len(chunk) > fr.limit+2 {
				tooLarge = true
				fr.buf = fr.buf[:0]
			} else {
				fr.buf = append(fr.buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return nil, err
		case err != nil && size == 0:
			return nil, io.EOF
		}
		ending := 0
		if err == nil {
			ending = 1 // the '\n' that ended the line
		}
		if tooLarge {
			return nil, &FrameTooLargeError{Size: size - int64(ending), Limit: fr.limit}
		}
		frame := bytes.TrimSuffix(fr.buf[:len(fr.buf)-ending], []byte{'\r'})
		if len(frame) > fr.limit {
			return nil, &FrameTooLargeError{Size: size - int64(ending), Limit: fr.limit}
		}
		// Hand the buffer over rather than copy it; this also keeps the
		// reader from holding on to the memory of one huge frame.
		fr.buf = nil
		return frame, nil
	}
}
