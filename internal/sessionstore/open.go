package sessionstore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/config"
)

// Store kinds, the values of EVOKORE_SESSION_STORE.
const (
	KindMemory = "memory"
	KindFile   = "file"
	KindRedis  = "redis"
)

// DefaultRedisURL is where the redis store connects when
// EVOKORE_REDIS_URL is unset.
const DefaultRedisURL = config.DefaultRedisURL

// Options choose the store and shape it: all a store needs of the
// router's settings.
type Options struct {
	// Kind is EVOKORE_SESSION_STORE: memory, file or redis ("" is memory).
	Kind string
	// RedisURL and Prefix are EVOKORE_REDIS_URL and
	// EVOKORE_REDIS_KEY_PREFIX, with their defaults.
	RedisURL string
	Prefix   string
	// Dir is where the file store keeps sessions.
	Dir string
	// TTL is the idle time after which a session is dropped
	// (EVOKORE_SESSION_TTL_MS, settled by config).
	TTL time.Duration
}

// ReadOptions reads the store's variables from env; home is
// EVOKORE_HOME, under which a file store keeps its sessions.
func ReadOptions(env config.Env, home string, ttl time.Duration) Options {
	o := Options{
		Kind:     strings.ToLower(strings.TrimSpace(env.Get("EVOKORE_SESSION_STORE"))),
		RedisURL: strings.TrimSpace(env.Get("EVOKORE_REDIS_URL")),
		Prefix:   env.Get("EVOKORE_REDIS_KEY_PREFIX"),
		Dir:      filepath.Join(home, "session-store"),
		TTL:      ttl,
	}
	if o.Kind == "" {
		o.Kind = config.DefaultSessionStore
	}
	if o.RedisURL == "" {
		o.RedisURL = DefaultRedisURL
	}
	if o.Prefix == "" {
		o.Prefix = DefaultRedisPrefix
	}
	return o
}

// Shared reports whether other routers may write the store too, so a
// replica must re-read a session's changes per request.
func (o Options) Shared() bool { return o.Kind != KindMemory }

// Open returns the store o.Kind chooses: memory (the default, one
// replica), file (one machine) or redis. An unknown kind, or a Redis that
// does not answer, is an error: a replica must not quietly fall back to
// keeping sessions to itself.
func Open(o Options) (Store, error) {
	switch o.Kind {
	case KindMemory:
		return NewMemory(o.TTL), nil
	case KindFile:
		return NewFile(o.Dir, o.TTL), nil
	case KindRedis:
		c, err := DialRedis(context.Background(), o.RedisURL)
		if err != nil {
			return nil, err
		}
		return NewRedis(c, o.Prefix, o.TTL), nil
	default:
		return nil, fmt.Errorf("EVOKORE_SESSION_STORE=%q: want memory, file or redis", o.Kind)
	}
}
