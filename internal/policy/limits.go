package policy

import (
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

func seconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

func rejected(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}
}
