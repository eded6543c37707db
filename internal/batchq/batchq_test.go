package batchq

import (
	"slices"
	"testing"
	"time"
)

// Close writes everything offered, in order, in batches of at most max.
func TestCloseWritesEverythingInOrder(t *testing.T) {
	var got []int
	var sizes []int
	q := New(1000, 7, time.Hour, func(b []int) {
		got = append(got, b...)
		sizes = append(sizes, len(b))
	})
	for i := range 100 {
		if !q.Offer(i) {
			t.Fatalf("offer %d refused", i)
		}
	}
	q.Close() // a linger of an hour must not hold up Close
	want := make([]int, 100)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(got, want) {
		t.Fatalf("written %v", got)
	}
	for _, n := range sizes {
		if n > 7 {
			t.Fatalf("batch of %d > max 7: %v", n, sizes)
		}
	}
	if q.Offer(1) {
		t.Fatal("a closed queue took an item")
	}
}

// While the writer is stuck (a disk that stopped answering), offers never
// block: the queue fills, then drops and counts.
func TestFullQueueDropsAndCounts(t *testing.T) {
	entered := make(chan []int, 1)
	release := make(chan struct{})
	var written []int
	stuck := true
	q := New(3, 10, 0, func(b []int) {
		if stuck {
			stuck = false
			entered <- slices.Clone(b)
			<-release
		}
		written = append(written, b...)
	})
	q.Offer(0)
	first := <-entered // the writer holds item 0 and is stuck
	for i := 1; i <= 5; i++ {
		q.Offer(i)
	}
	if d := q.Dropped(); d != 2 {
		t.Fatalf("dropped %d, want 2 (queue of 3, 5 offered while stuck)", d)
	}
	close(release)
	q.Close()
	if !slices.Equal(first, []int{0}) || !slices.Equal(written, []int{0, 1, 2, 3}) {
		t.Fatalf("first batch %v, written %v", first, written)
	}
}

// A queue nobody offered to starts no writer and closes at once.
func TestCloseUnused(t *testing.T) {
	q := New(1, 1, time.Hour, func([]int) { t.Error("write called") })
	q.Close()
	q.Close()
}

// The writer lingers after a batch's first item, so items offered
// together are written together.
func TestLingerGathersABatch(t *testing.T) {
	batches := make(chan []int, 10)
	q := New(100, 100, time.Hour, func(b []int) { batches <- slices.Clone(b) })
	for i := range 5 {
		q.Offer(i)
	}
	q.Close()
	if b := <-batches; len(b) != 5 {
		t.Fatalf("first batch %v, want all 5 items", b)
	}
}

// A queue filling up stops the writer's lingering: a burst is written
// without waiting out the linger, so it does not overflow.
func TestHalfFullQueueIsWrittenAtOnce(t *testing.T) {
	batches := make(chan []int, 10)
	q := New(10, 100, time.Hour, func(b []int) { batches <- slices.Clone(b) })
	defer q.Close()
	for i := range 6 {
		q.Offer(i)
	}
	got := 0
	for got < 6 { // with an hour's linger and no hurry, this never ends
		got += len(<-batches)
	}
	if q.Dropped() != 0 {
		t.Fatalf("dropped %d", q.Dropped())
	}
}

// The queue holds memory for what waits, not for its size: after a burst
// that filled it is written, what it keeps is at most a batch's worth.
func TestAWrittenBurstLeavesNoBacklogMemory(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	written := make(chan int, 10000)
	first := true
	q := New(1000, 10, 0, func(b []int) {
		if first {
			first = false
			close(entered)
			<-release
		}
		for range b {
			written <- 1
		}
	})
	defer q.Close()
	q.Offer(0)
	<-entered // the writer is stuck: the burst waits in the queue
	for i := 1; i <= 1000; i++ {
		q.Offer(i)
	}
	q.mu.Lock()
	held := cap(q.pending)
	q.mu.Unlock()
	if held < 1000 {
		t.Fatalf("the burst waits in %d slots, want 1000", held)
	}
	close(release)
	for range 1001 {
		<-written
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) != 0 || cap(q.pending) > 10 {
		t.Fatalf("after the burst was written the queue keeps %d items' room (%d waiting), want at most a batch's (10)", cap(q.pending), len(q.pending))
	}
}
