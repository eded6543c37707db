package connect

import (
	"bytes"
	"errors"
	"fmt"
)

// posError is a problem at a byte offset of a file; the file's name and
// text are known only where it is reported (see located), so the
// parsers and converters need not carry them. An offset below zero is a
// problem without a place.
type posError struct {
	off int
	msg string
}

func (e *posError) Error() string { return e.msg }

// at is a problem at offset off.
func at(off int, format string, args ...any) error {
	return &posError{off: off, msg: fmt.Sprintf(format, args...)}
}

// lineCol is the 1-based line and byte column of offset off in data.
func lineCol(data []byte, off int) (int, int) {
	off = min(max(off, 0), len(data))
	line := bytes.Count(data[:off], []byte("\n")) + 1
	col := off - (bytes.LastIndexByte(data[:off], '\n') + 1) + 1
	return line, col
}

// located writes err as file:line:col: message when it has a place in
// data, else as file: message.
func located(file string, data []byte, err error) string {
	var pe *posError
	if errors.As(err, &pe) && pe.off >= 0 {
		line, col := lineCol(data, pe.off)
		return fmt.Sprintf("%s:%d:%d: %s", file, line, col, err.Error())
	}
	return fmt.Sprintf("%s: %s", file, err.Error())
}
