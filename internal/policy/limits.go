package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"golang.org/x/time/rate"

	"github.com/evokore/evokore/internal/config"
)

// Limits are the token buckets of the servers and tools that have a
// rateLimit: one per server and one per tool, for each caller (tenant +
// subject, or the session; see session.CallerOf), so one caller spending
// its budget never limits another. A server whose limitScope is "global"
// has one bucket for every caller, which protects the child from their
// sum; its callers are then passed as "".
type Limits struct {
	now func() time.Time
	// rates are the buckets' shapes by rate key: "<server>" or
	// "<server>/<child tool>".
	rates map[string]config.Rate

	mu      sync.Mutex
	buckets map[bucketKey]*rate.Limiter // made on a caller's first call
	// sweepAt is the number of buckets at which the full ones are
	// forgotten; it doubles past what a sweep leaves, so many callers
	// spending at once cost a sweep now and then, not one per call.
	sweepAt int
	// shared, when set, holds the buckets instead of this process (see
	// RateBackend).
	shared RateBackend
}

// bucketKey is one caller's bucket of one rate key.
type bucketKey struct{ rate, caller string }

// maxIdleBuckets is how many buckets Limits keeps before it forgets the
// full ones: a full bucket is what a caller's first call makes, so
// forgetting it loses nothing.
const maxIdleBuckets = 4096

// Bucket is one token bucket a call spends from.
type Bucket struct {
	// Key names the bucket: "<server>" or "<server>/<child tool>", then,
	// for a caller's own bucket, "@" and a digest of the caller.
	Key  string
	Rate config.Rate
}

// RateBackend keeps the buckets somewhere other than this process, so a
// limit holds across every replica that shares it (scale-out on Redis).
// The local token buckets stay the default.
type RateBackend interface {
	// Take spends one token of every bucket, all or none. When a bucket
	// is empty it spends nothing and returns that bucket's index and how
	// long until it holds a token. An error (the backend unreachable)
	// refuses the call: a limit that cannot be checked is not skipped.
	Take(ctx context.Context, buckets []Bucket) (refused int, retry time.Duration, err error)
}

// Share moves the buckets into backend; the local ones are no longer
// used. Called once, before the first call.
func (l *Limits) Share(backend RateBackend) { l.shared = backend }

// NewLimits reads the buckets' shapes from the servers' rateLimit
// blocks. Buckets start full.
func NewLimits(servers []config.Server, now func() time.Time) *Limits {
	if now == nil {
		now = time.Now
	}
	l := &Limits{now: now, rates: map[string]config.Rate{}, buckets: map[bucketKey]*rate.Limiter{}}
	for _, s := range servers {
		if r := s.RateLimit.ServerRate(); r.Burst > 0 {
			l.rates[s.ID] = r
		}
		for tool, r := range s.RateLimit.ToolRates() {
			l.rates[s.ID+"/"+tool] = r
		}
	}
	return l
}

// carry keeps prev's buckets wherever l has the same rate and burst for
// the same key, so a reload does not refill a budget already spent.
func (l *Limits) carry(prev *Limits) *Limits {
	if prev == nil {
		return l
	}
	prev.mu.Lock()
	defer prev.mu.Unlock()
	for k, lim := range prev.buckets {
		if r, ok := l.rates[k.rate]; ok && r == prev.rates[k.rate] {
			l.buckets[k] = lim
		}
	}
	return l
}

func limiter(r config.Rate, now time.Time) *rate.Limiter {
	lim := rate.NewLimiter(rate.Limit(r.PerSecond), r.Burst)
	// Touch it at the injected time so a test clock and the limiter agree.
	lim.AllowN(now, 0)
	return lim
}

// bucket is caller's bucket of key, made full on first use; nil when key
// has no limit.
func (l *Limits) bucket(key, caller string, now time.Time) *rate.Limiter {
	r, ok := l.rates[key]
	if !ok {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	k := bucketKey{key, caller}
	if lim := l.buckets[k]; lim != nil {
		return lim
	}
	if len(l.buckets) >= max(l.sweepAt, maxIdleBuckets) {
		for k, lim := range l.buckets {
			if lim.TokensAt(now) >= float64(lim.Burst()) {
				delete(l.buckets, k)
			}
		}
		l.sweepAt = 2 * len(l.buckets)
	}
	lim := limiter(r, now)
	l.buckets[k] = lim
	return lim
}

// Take spends one token of caller's bucket of the tool and one of its
// server's. When either is empty nothing is spent (a tool token taken
// before the server rejects is given back) and the error says when to
// retry.
func (l *Limits) Take(caller, server, tool string) error {
	return l.TakeContext(context.Background(), caller, server, tool)
}

// TakeContext is Take with the call's context, which a shared backend's
// round trip honours.
func (l *Limits) TakeContext(ctx context.Context, caller, server, tool string) error {
	if len(l.rates) == 0 {
		return nil
	}
	if l.shared != nil {
		return l.takeShared(ctx, caller, server, tool)
	}
	now := l.now()
	var tr *rate.Reservation
	// Most tools have no limit of their own: the lookup builds no key.
	if _, limited := l.rates[server+"/"+tool]; limited {
		tr = l.bucket(server+"/"+tool, caller, now).ReserveN(now, 1)
		if d := tr.DelayFrom(now); !tr.OK() || d > 0 {
			tr.CancelAt(now)
			return rejected(ToolRateLimitText(server, tool, seconds(d)))
		}
	}
	if sl := l.bucket(server, caller, now); sl != nil {
		sr := sl.ReserveN(now, 1)
		if d := sr.DelayFrom(now); !sr.OK() || d > 0 {
			sr.CancelAt(now)
			if tr != nil {
				tr.CancelAt(now)
			}
			return rejected(ServerRateLimitText(server, seconds(d)))
		}
	}
	return nil
}

func (l *Limits) takeShared(ctx context.Context, caller, server, tool string) error {
	var buckets []Bucket
	var isServer []bool
	suffix := ""
	if caller != "" {
		// A digest keeps a subject's characters out of the backend's keys.
		sum := sha256.Sum256([]byte(caller))
		suffix = "@" + hex.EncodeToString(sum[:16])
	}
	if r, ok := l.rates[server+"/"+tool]; ok {
		buckets = append(buckets, Bucket{Key: server + "/" + tool + suffix, Rate: r})
		isServer = append(isServer, false)
	}
	if r, ok := l.rates[server]; ok {
		buckets = append(buckets, Bucket{Key: server + suffix, Rate: r})
		isServer = append(isServer, true)
	}
	if len(buckets) == 0 {
		return nil
	}
	refused, retry, err := l.shared.Take(ctx, buckets)
	switch {
	case err != nil:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: RateLimitUnavailableText(server, err)}
	case refused < 0:
		return nil
	case isServer[refused]:
		return rejected(ServerRateLimitText(server, seconds(retry)))
	default:
		return rejected(ToolRateLimitText(server, tool, seconds(retry)))
	}
}

func seconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

func rejected(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}
}
