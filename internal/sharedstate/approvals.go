package sharedstate

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/evokore/evokore/internal/policy"
)

// MaxApprovals bounds the live approvals all replicas keep together; past
// it the one expiring first is dropped (its call is simply intercepted
// again), so a flood of gated calls cannot fill Redis.
const MaxApprovals = 4096

// fileScript stores an approval. KEYS: record, binding ("" for token
// approvals), index. ARGV: id, JSON, lifetime ms, expiry ms, record key
// prefix, binding key prefix, cap. An operator-mode binding that already
// has a live approval returns that one's JSON instead.
var fileScript = redis.NewScript(`
if KEYS[2] ~= '' then
  local existing = redis.call('GET', KEYS[2])
  if existing then
    local v = redis.call('GET', ARGV[5] .. existing)
    if v then return v end
  end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if KEYS[2] ~= '' then redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3]) end
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
local t = redis.call('TIME')
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. (tonumber(t[1]) * 1000))
local n = redis.call('ZCARD', KEYS[3])
local cap = tonumber(ARGV[7])
if n > cap then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, n - cap - 1)) do
    local v = redis.call('GET', ARGV[5] .. id)
    if v then
      local ok, rec = pcall(cjson.decode, v)
      if ok and type(rec) == 'table' and not rec.token and type(rec.binding) == 'string' then
        redis.call('DEL', ARGV[6] .. rec.binding)
      end
    end
    redis.call('DEL', ARGV[5] .. id)
    redis.call('ZREM', KEYS[3], id)
  end
end
return ARGV[2]
`)

// consumeScript uses up an approved approval. KEYS: record, index. ARGV:
// id, binding key prefix. Returns 1 to exactly one caller.
var consumeScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local ok, rec = pcall(cjson.decode, v)
if not ok or type(rec) ~= 'table' or rec.state ~= 'approved' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if not rec.token and type(rec.binding) == 'string' then
  local b = ARGV[2] .. rec.binding
  if redis.call('GET', b) == ARGV[1] then redis.call('DEL', b) end
end
return 1
`)

// decideScript records a verdict. KEYS: record. ARGV: verdict. Returns
// "none", "denied" (approving a denied one) or "ok".
var decideScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return 'none' end
local ok, rec = pcall(cjson.decode, v)
if not ok or type(rec) ~= 'table' then return 'none' end
if ARGV[1] == 'denied' then
  rec.state = 'denied'
elseif rec.state == 'denied' then
  return 'denied'
elseif rec.state == 'pending' then
  rec.state = 'approved'
end
redis.call('SET', KEYS[1], cjson.encode(rec), 'KEEPTTL')
return 'ok'
`)

// Approvals is policy.ApprovalBackend on Redis.
type Approvals struct {
	client *redis.Client
	prefix string
}

// NewApprovals returns the shared approvals under prefix.
func NewApprovals(client *redis.Client, prefix string) *Approvals {
	return &Approvals{client: client, prefix: prefix}
}

func (a *Approvals) recordPrefix() string  { return a.prefix + "approval:" }
func (a *Approvals) bindingPrefix() string { return a.prefix + "approval-binding:" }
func (a *Approvals) index() string         { return a.prefix + "approvals" }

// File implements policy.ApprovalBackend.
func (a *Approvals) File(ctx context.Context, rec policy.ApprovalRecord) (policy.ApprovalRecord, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return policy.ApprovalRecord{}, err
	}
	life := rec.Expires.Sub(rec.Created).Milliseconds()
	if life <= 0 {
		return policy.ApprovalRecord{}, errors.New("approval without a lifetime")
	}
	binding := ""
	if !rec.Token {
		binding = a.bindingPrefix() + rec.Binding
	}
	out, err := fileScript.Run(ctx, a.client, []string{a.recordPrefix() + rec.ID, binding, a.index()},
		rec.ID, data, life, rec.Expires.UnixMilli(), a.recordPrefix(), a.bindingPrefix(), MaxApprovals).Text()
	if err != nil {
		return policy.ApprovalRecord{}, err
	}
	var got policy.ApprovalRecord
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		return policy.ApprovalRecord{}, err
	}
	return got, nil
}

// Get implements policy.ApprovalBackend. A record that does not parse is
// no approval.
func (a *Approvals) Get(ctx context.Context, id string) (policy.ApprovalRecord, bool, error) {
	data, err := a.client.Get(ctx, a.recordPrefix()+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return policy.ApprovalRecord{}, false, nil
	}
	if err != nil {
		return policy.ApprovalRecord{}, false, err
	}
	var rec policy.ApprovalRecord
	if err := json.Unmarshal(data, &rec); err != nil || rec.ID != id {
		return policy.ApprovalRecord{}, false, nil
	}
	return rec, true, nil
}

// Consume implements policy.ApprovalBackend.
func (a *Approvals) Consume(ctx context.Context, id string) (bool, error) {
	n, err := consumeScript.Run(ctx, a.client, []string{a.recordPrefix() + id, a.index()}, id, a.bindingPrefix()).Int()
	return n == 1, err
}

// List implements policy.ApprovalBackend.
func (a *Approvals) List(ctx context.Context) ([]policy.ApprovalRecord, error) {
	ids, err := a.client.ZRange(ctx, a.index(), 0, -1).Result()
	if err != nil {
		return nil, err
	}
	out := []policy.ApprovalRecord{}
	for len(ids) > 0 {
		batch := ids[:min(len(ids), 200)]
		ids = ids[len(batch):]
		keys := make([]string, len(batch))
		for i, id := range batch {
			keys[i] = a.recordPrefix() + id
		}
		vals, err := a.client.MGet(ctx, keys...).Result()
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			s, ok := v.(string)
			var rec policy.ApprovalRecord
			if !ok || json.Unmarshal([]byte(s), &rec) != nil || rec.ID != batch[i] {
				a.client.ZRem(ctx, a.index(), batch[i]) // expired: tidy the index
				continue
			}
			out = append(out, rec)
		}
	}
	slices.SortStableFunc(out, func(x, y policy.ApprovalRecord) int { return x.Created.Compare(y.Created) })
	return out, nil
}

// RevokeTool implements policy.ApprovalBackend.
func (a *Approvals) RevokeTool(ctx context.Context, tool string) error {
	recs, err := a.List(ctx)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if r.Tool != tool {
			continue
		}
		keys := []string{a.recordPrefix() + r.ID}
		if !r.Token {
			keys = append(keys, a.bindingPrefix()+r.Binding)
		}
		if err := a.client.Del(ctx, keys...).Err(); err != nil {
			return err
		}
		a.client.ZRem(ctx, a.index(), r.ID)
	}
	return nil
}

// Decide implements policy.ApprovalBackend.
func (a *Approvals) Decide(ctx context.Context, id, verdict string) error {
	if verdict != policy.StateApproved && verdict != policy.StateDenied {
		return errors.New("a verdict is approved or denied")
	}
	out, err := decideScript.Run(ctx, a.client, []string{a.recordPrefix() + id}, verdict).Text()
	switch {
	case err != nil:
		return err
	case out == "none":
		return policy.ErrNoApproval
	case out == "denied":
		return policy.ErrApprovalDenied
	}
	return nil
}
