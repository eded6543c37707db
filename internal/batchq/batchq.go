// Package batchq is the queue behind the router's records (the audit log,
// the session replay and trust ledgers): callers offer items without ever
// blocking, and one goroutine hands them to a writer in batches.
//
// A record costs a tool call nothing but an append under a lock. The
// writer lingers a little after the first item of a batch, so a busy
// router writes a file a few dozen times a second instead of once per
// call: with one call at a time, writing (and syncing) per call cost
// about twice the CPU of proxying the call itself. An idle router runs no
// timer and no goroutine until the first item; Close writes everything
// queued.
//
// The queue holds what is waiting, not room for its whole size: it was a
// buffered channel, whose buffer (size items of a few hundred bytes,
// about 2 MiB for the audit log and the session records together) stayed
// on the heap, and in the collector's goal twice over, for the life of
// the router, although one call at a time leaves a handful of items
// waiting.
//
// A full queue (a disk that stopped answering) drops the newest items and
// counts them, so a stuck disk never holds up a call or grows memory.
package batchq

import (
	"sync"
	"sync/atomic"
	"time"
)

// Linger is how long the writer waits after the first item of a batch
// for more to join it: records reach their files within it.
const Linger = 20 * time.Millisecond

// Queue batches items of type T for one writer.
type Queue[T any] struct {
	write  func([]T)
	linger time.Duration
	max    int
	size   int

	mu      sync.Mutex
	pending []T // offered, not yet taken by the writer
	closed  bool
	started bool

	wake    chan struct{} // an item arrived in an empty queue
	hurry   chan struct{} // an Offer that finds the queue half full: stop lingering
	stop    chan struct{} // closed by Close: stop lingering, drain
	done    chan struct{} // closed when the writer has written everything
	dropped atomic.Int64
}

// New returns a queue holding at most size items that calls write with
// batches of at most max items, lingering linger after a batch's first
// item. write runs on one goroutine, never concurrently with itself; it
// must not keep the slice. The queue takes memory for the items waiting
// only: a router that records nothing pays nothing.
func New[T any](size, max int, linger time.Duration, write func([]T)) *Queue[T] {
	return &Queue[T]{write: write, linger: linger, max: max, size: size,
		wake: make(chan struct{}, 1), hurry: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// Offer queues v and reports whether it was taken; it never blocks. A
// full queue drops v and counts it; a closed one ignores it.
func (q *Queue[T]) Offer(v T) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	if len(q.pending) >= q.size {
		q.mu.Unlock()
		q.dropped.Add(1)
		return false
	}
	q.pending = append(q.pending, v)
	n := len(q.pending)
	if !q.started {
		q.started = true
		go q.run()
	}
	q.mu.Unlock()
	if n == 1 {
		signal(q.wake)
	}
	if n > q.size/2 {
		signal(q.hurry)
	}
	return true
}

// signal leaves a token in c unless one is there already.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Dropped reports how many items a full queue dropped.
func (q *Queue[T]) Dropped() int64 { return q.dropped.Load() }

// Close writes what is queued and stops the writer. Later offers are
// ignored.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.stop)
		if !q.started { // never started: nothing to write
			q.started = true
			close(q.done)
		}
	}
	q.mu.Unlock()
	<-q.done
}

func (q *Queue[T]) run() {
	defer close(q.done)
	var batch []T
	var timer *time.Timer
	for {
		select {
		case <-q.wake:
		case <-q.stop:
		}
		if n, closed := q.waiting(); q.linger > 0 && !closed && n < q.max {
			if timer == nil {
				timer = time.NewTimer(q.linger)
			} else {
				timer.Reset(q.linger)
			}
			select {
			case <-timer.C:
			case <-q.hurry:
				timer.Stop()
			case <-q.stop:
				timer.Stop()
			}
		}
		for {
			var closed bool
			batch, closed = q.take(batch[:0])
			if len(batch) == 0 {
				if closed {
					return
				}
				break
			}
			q.write(batch)
			clear(batch) // let the written items be collected
		}
	}
}

// waiting is how many items wait and whether the queue is closed.
func (q *Queue[T]) waiting() (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending), q.closed
}

// take moves up to max waiting items, the oldest first, into batch and
// reports whether the queue is closed. The waiting items' memory goes
// once they are all taken and it is more than a batch's.
func (q *Queue[T]) take(batch []T) ([]T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := min(len(q.pending), q.max)
	batch = append(batch, q.pending[:k]...)
	n := copy(q.pending, q.pending[k:])
	clear(q.pending[n:])
	q.pending = q.pending[:n]
	if n == 0 && cap(q.pending) > q.max {
		q.pending = nil
	}
	return batch, q.closed
}
