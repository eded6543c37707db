// Package batchq is the queue behind the router's records (the audit log,
// the session replay and trust ledgers): callers offer items without ever
// blocking, and one goroutine hands them to a writer in batches.
//
// A record costs a tool call nothing but a channel send. The writer
// lingers a little after the first item of a batch, so a busy router
// writes a file a few dozen times a second instead of once per call: with
// one call at a time, writing (and syncing) per call cost about twice the
// CPU of proxying the call itself. An idle router runs no timer and no
// goroutine until the first item; Close writes everything queued.
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

	items   chan T        // made by the first Offer
	hurry   chan struct{} // an Offer that finds the queue half full: stop lingering
	stop    chan struct{} // closed by Close: stop lingering, drain
	done    chan struct{} // closed when the writer has written everything
	dropped atomic.Int64
	closeMu sync.RWMutex
	closed  bool
	start   sync.Once
}

// New returns a queue holding at most size items that calls write with
// batches of at most max items, lingering linger after a batch's first
// item. write runs on one goroutine, never concurrently with itself; it
// must not keep the slice. The queue's memory is taken with its first
// item: a router that records nothing pays nothing.
func New[T any](size, max int, linger time.Duration, write func([]T)) *Queue[T] {
	return &Queue[T]{write: write, linger: linger, max: max, size: size,
		hurry: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// Offer queues v and reports whether it was taken; it never blocks. A
// full queue drops v and counts it; a closed one ignores it.
func (q *Queue[T]) Offer(v T) bool {
	q.closeMu.RLock()
	defer q.closeMu.RUnlock()
	if q.closed {
		return false
	}
	q.start.Do(func() {
		q.items = make(chan T, q.size)
		go q.run()
	})
	select {
	case q.items <- v:
		if len(q.items) > q.size/2 {
			select {
			case q.hurry <- struct{}{}:
			default:
			}
		}
		return true
	default:
		q.dropped.Add(1)
		return false
	}
}

// Dropped reports how many items a full queue dropped.
func (q *Queue[T]) Dropped() int64 { return q.dropped.Load() }

// Close writes what is queued and stops the writer. Later offers are
// ignored.
func (q *Queue[T]) Close() {
	q.closeMu.Lock()
	if !q.closed {
		q.closed = true
		close(q.stop)
		q.start.Do(func() { close(q.done) }) // never started: nothing to write
		if q.items != nil {
			close(q.items)
		}
	}
	q.closeMu.Unlock()
	<-q.done
}

func (q *Queue[T]) run() {
	defer close(q.done)
	batch := make([]T, 0, q.max)
	var timer *time.Timer
	for first := range q.items {
		batch = append(batch[:0], first)
		if q.linger > 0 && len(q.items) < q.max-1 {
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
	fill:
		for len(batch) < q.max {
			select {
			case v, ok := <-q.items:
				if !ok {
					break fill
				}
				batch = append(batch, v)
			default:
				break fill
			}
		}
		q.write(batch)
		clear(batch) // let the written items be collected
	}
}
