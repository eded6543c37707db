package voice

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
)

// queued is one utterance waiting to be played, and the files to delete
// once it has been (or could not be).
type queued struct {
	file    string
	cleanup []string
}

// Queue plays utterances one at a time in the order they were enqueued.
// There is one per sidecar process, shared by every connection, so that
// several agents stopping at once never talk over each other.
//
// A worker goroutine runs only while there is something to play; a
// failing or panicking player loses its own utterance and nothing else.
type Queue struct {
	play func(ctx context.Context, file string) error
	log  *slog.Logger

	ctx    context.Context // ends on Close; kills the player in progress
	cancel context.CancelFunc

	mu      sync.Mutex
	items   []queued
	running bool
	closed  bool
	idle    chan struct{} // closed when the worker stops; nil while none runs
}

// NewQueue returns a queue that plays with play. It starts nothing.
func NewQueue(play func(ctx context.Context, file string) error, log *slog.Logger) *Queue {
	ctx, cancel := context.WithCancel(context.Background())
	return &Queue{play: play, log: log, ctx: ctx, cancel: cancel}
}

// Enqueue adds an utterance. After Close its files are deleted at once.
func (q *Queue) Enqueue(item queued) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		removeAll(q.log, item.cleanup)
		return
	}
	q.items = append(q.items, item)
	if !q.running {
		q.running = true
		q.idle = make(chan struct{})
		go q.work(q.idle)
	}
	q.mu.Unlock()
}

// work plays until the queue is empty.
func (q *Queue) work(idle chan struct{}) {
	defer close(idle)
	for {
		q.mu.Lock()
		if len(q.items) == 0 || q.closed {
			q.running = false
			q.mu.Unlock()
			return
		}
		item := q.items[0]
		q.items = q.items[1:]
		q.mu.Unlock()
		q.playOne(item)
	}
}

func (q *Queue) playOne(item queued) {
	defer removeAll(q.log, item.cleanup)
	defer func() {
		if r := recover(); r != nil {
			q.log.Error("playback panicked", "file", item.file, "panic", fmt.Sprint(r))
		}
	}()
	if err := q.play(q.ctx, item.file); err != nil && q.ctx.Err() == nil {
		q.log.Warn("playback failed", "file", item.file, "err", err)
	}
}

// Close stops playback: the utterance playing is cut short, the waiting
// ones are dropped, and every temporary file is deleted before it returns.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	rest := q.items
	q.items = nil
	idle := q.idle
	running := q.running
	q.mu.Unlock()
	q.cancel()
	for _, item := range rest {
		removeAll(q.log, item.cleanup)
	}
	if running {
		<-idle
	}
}

func removeAll(log *slog.Logger, files []string) {
	for _, f := range files {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			log.Warn("cannot delete a temporary audio file", "file", f, "err", err)
		}
	}
}
