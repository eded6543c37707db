package sharedstate

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/evokore/evokore/internal/policy"
)

// gcra spends one emission interval of every bucket, or none. ARGV holds,
// per key, the emission interval and the burst. A key holds the bucket's
// theoretical arrival time (TAT) in microseconds; a call is allowed when
// TAT + interval - burst*interval is not in the future. It returns
// {0, 0} when allowed, else {index of the refusing key (1-based),
// microseconds until it allows}.
var gcra = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tats = {}
for i, key in ipairs(KEYS) do
  local interval = tonumber(ARGV[2*i-1])
  local burst = tonumber(ARGV[2*i])
  local tat = tonumber(redis.call('GET', key) or now) or now
  if tat < now then tat = now end
  local allowAt = tat + interval - burst * interval
  if now < allowAt then
    return {i, math.ceil(allowAt - now)}
  end
  tats[i] = tat + interval
end
for i, key in ipairs(KEYS) do
  redis.call('SET', key, string.format('%.0f', tats[i]), 'PX', math.ceil((tats[i] - now) / 1000) + 1)
end
return {0, 0}
`)

// Limiter is policy.RateBackend on Redis: one GCRA bucket per key,
// shared by every replica.
type Limiter struct {
	client *redis.Client
	prefix string
}

// NewLimiter returns the shared buckets under prefix.
func NewLimiter(client *redis.Client, prefix string) *Limiter {
	return &Limiter{client: client, prefix: prefix}
}

// Take implements policy.RateBackend.
func (l *Limiter) Take(ctx context.Context, buckets []policy.Bucket) (int, time.Duration, error) {
	keys := make([]string, len(buckets))
	args := make([]any, 0, 2*len(buckets))
	for i, b := range buckets {
		if b.Rate.PerSecond <= 0 || b.Rate.Burst <= 0 {
			return 0, 0, fmt.Errorf("bucket %s has no rate", b.Key)
		}
		keys[i] = l.prefix + "ratelimit:" + b.Key
		args = append(args, int64(math.Ceil(1e6/b.Rate.PerSecond)), b.Rate.Burst)
	}
	res, err := gcra.Run(ctx, l.client, keys, args...).Int64Slice()
	if err != nil {
		return 0, 0, err
	}
	if len(res) != 2 {
		return 0, 0, fmt.Errorf("rate-limit script answered %v", res)
	}
	if res[0] == 0 {
		return -1, 0, nil
	}
	return int(res[0] - 1), time.Duration(res[1]) * time.Microsecond, nil
}
