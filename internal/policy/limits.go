package policy

import (
	"context"
	"math"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"golang.org/x/time/rate"

	"github.com/evokore/evokore/internal/config"
)

// Limits are the token buckets that protect child servers: one per server
// and one per tool that has a limit, shared by every session (a limit per
// session would multiply the child's budget by the number of clients).
type Limits struct {
	now     func() time.Time
	servers map[string]*rate.Limiter
	tools   map[string]*rate.Limiter // "<server>/<child tool>"
	// shared, when set, holds the buckets instead of this process (see
	// RateBackend); rates are then the buckets' shapes by key.
	shared RateBackend
	rates  map[string]config.Rate
}

// Bucket is one token bucket a call spends from.
type Bucket struct {
	// Key is "<server>" or "<server>/<child tool>".
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
func (l *Limits) Share(backend RateBackend, servers []config.Server) {
	l.shared = backend
	l.rates = map[string]config.Rate{}
	for _, s := range servers {
		if r := s.RateLimit.ServerRate(); r.Burst > 0 {
			l.rates[s.ID] = r
		}
		for tool, r := range s.RateLimit.ToolRates() {
			if r.Burst > 0 {
				l.rates[s.ID+"/"+tool] = r
			}
		}
	}
}

// NewLimits builds the buckets from the servers' rateLimit blocks. Buckets
// start full.
func NewLimits(servers []config.Server, now func() time.Time) *Limits {
	if now == nil {
		now = time.Now
	}
	l := &Limits{now: now, servers: map[string]*rate.Limiter{}, tools: map[string]*rate.Limiter{}}
	for _, s := range servers {
		if r := s.RateLimit.ServerRate(); r.Burst > 0 {
			l.servers[s.ID] = limiter(r, now())
		}
		for tool, r := range s.RateLimit.ToolRates() {
			l.tools[s.ID+"/"+tool] = limiter(r, now())
		}
	}
	return l
}

// carry keeps prev's bucket wherever l has the same rate and burst for
// the same key, so a reload does not refill a budget already spent.
func (l *Limits) carry(prev *Limits) *Limits {
	if prev == nil {
		return l
	}
	keep := func(next, old map[string]*rate.Limiter) {
		for k, lim := range next {
			if o := old[k]; o != nil && o.Limit() == lim.Limit() && o.Burst() == lim.Burst() {
				next[k] = o
			}
		}
	}
	keep(l.servers, prev.servers)
	keep(l.tools, prev.tools)
	return l
}

func limiter(r config.Rate, now time.Time) *rate.Limiter {
	lim := rate.NewLimiter(rate.Limit(r.PerSecond), r.Burst)
	// Touch it at the injected time so a test clock and the limiter agree.
	lim.AllowN(now, 0)
	return lim
}

// Take spends one token of the tool's bucket and one of its server's. When
// either is empty nothing is spent (a tool token taken before the server
// rejects is given back) and the error says when to retry.
func (l *Limits) Take(server, tool string) error {
	return l.TakeContext(context.Background(), server, tool)
}

// TakeContext is Take with the call's context, which a shared backend's
// round trip honours.
func (l *Limits) TakeContext(ctx context.Context, server, tool string) error {
	if l.shared != nil {
		return l.takeShared(ctx, server, tool)
	}
	now := l.now()
	var tr *rate.Reservation
	if tl := l.tools[server+"/"+tool]; tl != nil {
		tr = tl.ReserveN(now, 1)
		if d := tr.DelayFrom(now); !tr.OK() || d > 0 {
			tr.CancelAt(now)
			return rejected(ToolRateLimitText(server, tool, seconds(d)))
		}
	}
	if sl := l.servers[server]; sl != nil {
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

func (l *Limits) takeShared(ctx context.Context, server, tool string) error {
	var buckets []Bucket
	if r, ok := l.rates[server+"/"+tool]; ok {
		buckets = append(buckets, Bucket{Key: server + "/" + tool, Rate: r})
	}
	if r, ok := l.rates[server]; ok {
		buckets = append(buckets, Bucket{Key: server, Rate: r})
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
	case buckets[refused].Key == server:
		return rejected(ServerRateLimitText(server, seconds(retry)))
	default:
		return rejected(ToolRateLimitText(server, tool, seconds(retry)))
	}
}

func seconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

func rejected(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}
}
