package linewrite

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// Lines written from many goroutines at once reach the reader whole,
// each exactly once, through a real pipe; a burst takes fewer writes
// than lines.
func TestConcurrentLinesArriveWholeAndOnce(t *testing.T) {
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	counter := &countingWriter{w: pw}
	w := New(counter)
	const writers, each = 16, 300
	got := map[string]int{}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			got[sc.Text()]++
		}
	}()
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				line := fmt.Sprintf(`{"writer":%d,"n":%d,"pad":%q}`+"\n", g, i, strings.Repeat("x", i%97))
				if _, err := w.Write([]byte(line)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	pw.Close()
	<-read
	if len(got) != writers*each {
		t.Fatalf("%d distinct lines, want %d", len(got), writers*each)
	}
	for line, n := range got {
		if n != 1 || !strings.HasPrefix(line, `{"writer":`) || !strings.HasSuffix(line, `"}`) {
			t.Fatalf("line %q seen %d times", line, n)
		}
	}
	t.Logf("%d lines in %d writes", writers*each, counter.n)
}

// A pipe whose reader is gone fails every write after, not just the
// first.
func TestErrorIsSticky(t *testing.T) {
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	w := New(pw)
	for range 3 {
		if _, err := w.Write([]byte("x\n")); err == nil {
			t.Fatal("write to a pipe without a reader succeeded")
		}
	}
}

// A write that failed part way (at a deadline, to a reader that stopped
// reading) may have left part of a line in the pipe: nothing is written
// after it, so no line is ever appended to a torn one.
func TestNothingIsWrittenAfterAFailedWrite(t *testing.T) {
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer pw.Close()
	counter := &countingWriter{w: pw}
	w := New(counter)
	_ = pw.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := w.Write([]byte(strings.Repeat("x", 1<<20) + "\n")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a megabyte to a pipe nobody reads: %v", err)
	}
	_ = pw.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := w.Write([]byte("next\n")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the write after: %v, want the first error", err)
	}
	if counter.n != 1 {
		t.Errorf("%d writes reached the pipe, want 1", counter.n)
	}
}

type countingWriter struct {
	w  *os.File
	mu sync.Mutex
	n  int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.w.Write(p)
}
