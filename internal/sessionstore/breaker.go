package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrUnavailable is the error of a command not sent because Redis did
// not answer the last one: the breaker is open until a probe gets an
// answer.
var ErrUnavailable = errors.New("redis is not answering")

// Redis's commands are short: a session record, a rate-limit script, an
// approval. A Redis that takes a second to answer one is as good as
// down, and every request of a live session would wait for it.
const (
	defaultReadTimeout = time.Second
	defaultDialTimeout = 2 * time.Second
	probeEvery         = 250 * time.Millisecond
)

// breaker is a go-redis hook that stops a client from waiting on a
// Redis that does not answer. A replica keeps serving the sessions it
// holds while the shared store is down (only the stages that need shared
// state refuse), but each request would still wait its command's
// timeout, again and again, while Redis is frozen, swapped out or
// unreachable. So once a command fails for want of an answer (a timeout,
// a refused or broken connection), the breaker opens: every command fails
// at once with ErrUnavailable, and one probe a quarter second asks PING
// until Redis answers, which closes it. A reply of Redis's (an error it
// sent, a missing key) is an answer and opens nothing.
type breaker struct {
	client *redis.Client

	mu      sync.Mutex
	open    bool
	since   time.Time
	lastErr error
}

type probeKey struct{}

// guard installs a breaker on c and gives it the short timeouts above
// where the URL set none.
func guard(opts *redis.Options) *redis.Client {
	if opts.ReadTimeout == 0 {
		opts.ReadTimeout = defaultReadTimeout
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = defaultDialTimeout
	}
	c := redis.NewClient(opts)
	c.AddHook(&breaker{client: c})
	return c
}

func (b *breaker) DialHook(next redis.DialHook) redis.DialHook { return next }

func (b *breaker) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := b.refuse(ctx); err != nil {
			cmd.SetErr(err)
			return err
		}
		err := next(ctx, cmd)
		b.observe(ctx, err)
		return err
	}
}

func (b *breaker) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := b.refuse(ctx); err != nil {
			for _, c := range cmds {
				c.SetErr(err)
			}
			return err
		}
		err := next(ctx, cmds)
		b.observe(ctx, err)
		return err
	}
}

// refuse is the error of a command sent while the breaker is open (the
// probe's own commands pass).
func (b *breaker) refuse(ctx context.Context) error {
	if ctx.Value(probeKey{}) != nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return nil
	}
	return fmt.Errorf("%w since %s (%v)", ErrUnavailable, b.since.UTC().Format(time.TimeOnly), b.lastErr)
}

// observe opens the breaker when err says Redis did not answer.
func (b *breaker) observe(ctx context.Context, err error) {
	if !unanswered(err) || ctx.Value(probeKey{}) != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open {
		return
	}
	b.open, b.since, b.lastErr = true, time.Now(), err
	go b.probe()
}

// probe asks PING until Redis answers, then closes the breaker; it ends
// with the client.
func (b *breaker) probe() {
	ctx := context.WithValue(context.Background(), probeKey{}, true)
	for {
		time.Sleep(probeEvery)
		pctx, cancel := context.WithTimeout(ctx, defaultReadTimeout)
		err := b.client.Ping(pctx).Err()
		cancel()
		if errors.Is(err, redis.ErrClosed) {
			return
		}
		if err == nil {
			b.mu.Lock()
			b.open = false
			b.mu.Unlock()
			return
		}
	}
}

// unanswered reports an error that means Redis gave no answer: not one
// of its replies, not the caller giving up.
func unanswered(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) || errors.Is(err, redis.ErrClosed) {
		return false
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, redis.ErrPoolTimeout)
}
