// Package linewrite writes whole lines to a pipe from many goroutines,
// combining the lines that arrive while a write is in progress into the
// next single write.
//
// The router writes one JSON-RPC message per line to the client's stdout
// and to each child's stdin, from every call in flight. Each write is a
// system call that also wakes the reader at the other end; with sixteen
// calls in flight, answers arrive in bursts, and writing a burst as one
// write saves both. Nothing waits for company: a line written while the
// pipe is idle goes out at once, alone.
package linewrite

import (
	"io"
	"sync"
)

// maxSpare bounds the buffer a Writer keeps between writes.
const maxSpare = 64 << 10

// Writer serialises line writes to an io.Writer. Write returns once its
// line has been written (by itself or by the goroutine whose write
// carried it), so a caller that returns knows its line left.
type Writer struct {
	out io.Writer

	mu   sync.Mutex
	cond sync.Cond
	// writing is set while a goroutine writes; pending holds the lines
	// that arrived meanwhile, which will be batch number next; done is
	// the last batch number written.
	writing    bool
	pending    []byte
	spare      []byte
	next, done uint64
	// err is the first write error: a pipe that failed once is gone,
	// and nothing more is written to it (a write that failed part way,
	// at a deadline, may have left part of a line in it).
	err error
}

// New returns a Writer to out.
func New(out io.Writer) *Writer {
	w := &Writer{out: out, next: 1}
	w.cond.L = &w.mu
	return w
}

// Write writes line, which must end with a newline, and reports the
// first error the output ever returned; from that error on, it writes
// nothing.
func (w *Writer) Write(line []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	if !w.writing && len(w.pending) == 0 {
		// Idle: write the caller's own bytes, no copy.
		w.writing = true
		w.mu.Unlock()
		_, err := w.out.Write(line)
		w.mu.Lock()
		w.finish(err, 0)
		if w.err != nil {
			return 0, w.err
		}
		return len(line), nil
	}
	w.pending = append(w.pending, line...)
	batch := w.next
	for w.done < batch && w.err == nil {
		if w.writing {
			w.cond.Wait()
			continue
		}
		// Nobody is writing and our line is still pending: write the
		// whole pending batch.
		buf, n := w.pending, w.next
		w.next++
		w.pending, w.spare = w.spare[:0], nil
		w.writing = true
		w.mu.Unlock()
		_, err := w.out.Write(buf)
		w.mu.Lock()
		if cap(buf) <= maxSpare {
			w.spare = buf[:0]
		}
		w.finish(err, n)
	}
	if w.err != nil {
		return 0, w.err
	}
	return len(line), nil
}

// finish ends a write (of batch n, when n > 0) and wakes the waiters:
// those whose batch it was return, and one of the others writes next.
func (w *Writer) finish(err error, n uint64) {
	w.writing = false
	if err != nil && w.err == nil {
		w.err = err
	}
	if n > 0 {
		w.done = n
	}
	w.cond.Broadcast()
}
