package analytics

import (
	"bufio"
	"io"
	"strings"
)

// lineReader reads lines of any length.
type lineReader struct {
	br   *bufio.Reader
	line string
	done bool
}

func newLineReader(r io.Reader) *lineReader { return &lineReader{br: bufio.NewReaderSize(r, 64<<10)} }

func (l *lineReader) next() bool {
	if l.done {
		return false
	}
	s, err := l.br.ReadString('\n')
	if err != nil {
		l.done = true
		if s == "" {
			return false
		}
	}
	l.line = strings.TrimRight(s, "\r\n")
	return true
}

func (l *lineReader) text() string { return l.line }
