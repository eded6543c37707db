package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/evokore/evokore/internal/config"
)

// DefaultRedisPrefix starts every key evokore writes to Redis when
// EVOKORE_REDIS_KEY_PREFIX is unset.
const DefaultRedisPrefix = config.DefaultRedisKeyPrefix

// Redis keeps sessions in Redis, one string key per session,
// <prefix>session:<id>, holding the record's JSON. Every replica that
// points at the same Redis and prefix serves the same sessions. The idle
// TTL is the key's expiry, refreshed by each Save, so Redis itself forgets
// a session nobody touched; no replica has to sweep.
type Redis struct {
	client *redis.Client
	prefix string
	ttl    time.Duration
}

// NewRedis returns a store over an open client. prefix namespaces the
// keys ("" means DefaultRedisPrefix).
func NewRedis(client *redis.Client, prefix string, ttl time.Duration) *Redis {
	if prefix == "" {
		prefix = DefaultRedisPrefix
	}
	return &Redis{client: client, prefix: prefix, ttl: ttl}
}

// DialRedis connects to url (redis://, rediss:// or unix://) and checks
// the server answers, so a replica that cannot share its state refuses
// to start instead of silently keeping sessions to itself. The client
// waits a second for an answer (unless the URL says otherwise) and stops
// asking a Redis that gave none until it answers again (breaker.go):
// commands fail at once with ErrUnavailable meanwhile.
func DialRedis(ctx context.Context, url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("EVOKORE_REDIS_URL: %w", err)
	}
	c := guard(opts)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redis at %s does not answer: %w", redactURL(url), err)
	}
	return c, nil
}

// redactURL drops the password of a redis URL for messages.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return "(unparsable URL)"
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		rest = "***@" + rest[at+1:]
	}
	return scheme + "://" + rest
}

// Client is the store's connection, for the other state replicas share
// (rate limits, approvals) to reuse.
func (s *Redis) Client() *redis.Client { return s.client }

// Prefix is the key prefix the store writes under.
func (s *Redis) Prefix() string { return s.prefix }

func (s *Redis) key(id string) string { return s.prefix + "session:" + id }

// Load implements Store. A key that does not hold one of our records is
// a session not found.
func (s *Redis) Load(ctx context.Context, id string) (Record, error) {
	if !ValidID(id) {
		return Record{}, ErrNotFound
	}
	data, err := s.client.Get(ctx, s.key(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Record{}, ErrNotFound
	}
	if err != nil {
		return Record{}, err
	}
	return decode(id, data)
}

// Save implements Store: the key's expiry restarts at the TTL.
func (s *Redis) Save(ctx context.Context, r Record) error {
	if !ValidID(r.ID) {
		return fmt.Errorf("session id %q cannot be stored", r.ID)
	}
	data, err := encode(r)
	if err != nil {
		return err
	}
	return s.client.Set(ctx, s.key(r.ID), data, s.ttl).Err()
}

// Delete implements Store.
func (s *Redis) Delete(ctx context.Context, id string) error {
	if !ValidID(id) {
		return nil
	}
	return s.client.Del(ctx, s.key(id)).Err()
}

// List implements Store. It scans the prefix's session keys, so it costs
// one round trip per hundred sessions: it serves status pages, not calls.
func (s *Redis) List(ctx context.Context) ([]Record, error) {
	out := []Record{}
	iter := s.client.Scan(ctx, 0, s.prefix+"session:*", 100).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return nil, err
	}
	for len(keys) > 0 {
		batch := keys[:min(len(keys), 100)]
		keys = keys[len(batch):]
		vals, err := s.client.MGet(ctx, batch...).Result()
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			str, ok := v.(string)
			if !ok {
				continue // expired between the scan and the read
			}
			if r, err := decode(strings.TrimPrefix(batch[i], s.prefix+"session:"), []byte(str)); err == nil {
				out = append(out, r)
			}
		}
	}
	SortNewestFirst(out)
	return out, nil
}

// Close implements Store.
func (s *Redis) Close() error { return s.client.Close() }
