package sharedstate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/sessionstore"
)

// KeyFileVar names the file holding the approval key replicas share.
const KeyFileVar = "EVOKORE_APPROVAL_KEY_FILE"

// minKey is the shortest approval key accepted, in bytes.
const minKey = 32

// ApprovalKey is the key every replica signs approval tokens with: the
// contents of keyFile when set (at least 32 bytes, surrounding
// whitespace trimmed), else the one stored under <prefix>approval-key,
// created by the first replica to ask.
func ApprovalKey(ctx context.Context, client *redis.Client, prefix, keyFile string) ([]byte, error) {
	if keyFile != "" {
		data, err := safefile.ReadFile(ctx, keyFile, safefile.Options{MaxBytes: 64 << 10})
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", KeyFileVar, keyFile, err)
		}
		key := bytes.TrimSpace(data)
		if len(key) < minKey {
			return nil, fmt.Errorf("%s=%s: the key must be at least %d bytes", KeyFileVar, keyFile, minKey)
		}
		return key, nil
	}
	fresh := make([]byte, minKey)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	k := prefix + "approval-key"
	if err := client.SetNX(ctx, k, hex.EncodeToString(fresh), 0).Err(); err != nil {
		return nil, err
	}
	stored, err := client.Get(ctx, k).Result()
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(stored)
	if err != nil || len(key) < minKey {
		return nil, fmt.Errorf("redis key %s does not hold an approval key; delete it to have one made", k)
	}
	return key, nil
}

// Shared is the state one replica shares with the others.
type Shared struct {
	Client    *redis.Client
	Limiter   *Limiter
	Approvals *Approvals
	Tasks     *Tasks
	Key       []byte
}

// Close releases the connection.
func (s *Shared) Close() error { return s.Client.Close() }

// Options are what sharing needs: the session store's choice (only
// redis shares) and EVOKORE_APPROVAL_KEY_FILE.
type Options struct {
	Store   sessionstore.Options
	KeyFile string
}

// ReadOptions reads the variables of sharing from env; home and ttl are
// the router's settled EVOKORE_HOME and session TTL.
func ReadOptions(env config.Env, home string, ttl time.Duration) Options {
	return Options{Store: sessionstore.ReadOptions(env, home, ttl), KeyFile: strings.TrimSpace(env.Get(KeyFileVar))}
}

// Enabled reports whether replicas share state: EVOKORE_SESSION_STORE=redis.
func (o Options) Enabled() bool { return o.Store.Kind == sessionstore.KindRedis }

// Open connects to the Redis the options name when sharing is enabled,
// and returns nil, nil otherwise (one replica keeps its state in
// process).
func Open(ctx context.Context, o Options) (*Shared, error) {
	if !o.Enabled() {
		return nil, nil
	}
	client, err := sessionstore.DialRedis(ctx, o.Store.RedisURL)
	if err != nil {
		return nil, err
	}
	key, err := ApprovalKey(ctx, client, o.Store.Prefix, o.KeyFile)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	return &Shared{Client: client, Limiter: NewLimiter(client, o.Store.Prefix), Approvals: NewApprovals(client, o.Store.Prefix),
		Tasks: NewTasks(client, o.Store.Prefix), Key: key}, nil
}

// Attach moves p's rate limits and approvals into the shared state.
func (s *Shared) Attach(p *policy.Policy) error {
	p.ShareLimits(s.Limiter)
	return p.Approvals.Share(s.Approvals, s.Key)
}

// Unavailable is a backend for a replica that was told to share its state
// but could not reach the store: every limited or approval-gated call is
// refused with err until the router restarts with Redis up.
type Unavailable struct{ Err error }

var _ policy.RateBackend = Unavailable{}
var _ policy.ApprovalBackend = Unavailable{}

func (u Unavailable) err() error {
	if u.Err == nil {
		return errors.New("shared state unavailable")
	}
	return u.Err
}

// Take implements policy.RateBackend.
func (u Unavailable) Take(context.Context, []policy.Bucket) (int, time.Duration, error) {
	return 0, 0, u.err()
}

// File implements policy.ApprovalBackend.
func (u Unavailable) File(context.Context, policy.ApprovalRecord) (policy.ApprovalRecord, error) {
	return policy.ApprovalRecord{}, u.err()
}

// Get implements policy.ApprovalBackend.
func (u Unavailable) Get(context.Context, string) (policy.ApprovalRecord, bool, error) {
	return policy.ApprovalRecord{}, false, u.err()
}

// Consume implements policy.ApprovalBackend.
func (u Unavailable) Consume(context.Context, string) (bool, error) { return false, u.err() }

// RevokeTool implements policy.ApprovalBackend.
func (u Unavailable) RevokeTool(context.Context, string) error { return u.err() }

// List implements policy.ApprovalBackend.
func (u Unavailable) List(context.Context) ([]policy.ApprovalRecord, error) { return nil, u.err() }

// Decide implements policy.ApprovalBackend.
func (u Unavailable) Decide(context.Context, string, string) error { return u.err() }

// AttachUnavailable makes p refuse every limited and approval-gated call
// with err: the fail-closed state of a replica whose Redis is down at
// start.
func AttachUnavailable(p *policy.Policy, err error) {
	u := Unavailable{Err: err}
	p.ShareLimits(u)
	key := make([]byte, minKey)
	_, _ = rand.Read(key)
	_ = p.Approvals.Share(u, key)
}
