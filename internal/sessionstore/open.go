package sessionstore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

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
const DefaultRedisURL = "redis://127.0.0.1:6379/0"

// Kind is the store EVOKORE_SESSION_STORE chooses ("" is memory).
func Kind(s config.Settings) string {
	k := strings.ToLower(strings.TrimSpace(s.Env.Get("EVOKORE_SESSION_STORE")))
	if k == "" {
		return KindMemory
	}
	return k
}

// RedisSettings are EVOKORE_REDIS_URL and EVOKORE_REDIS_KEY_PREFIX with
// their defaults.
func RedisSettings(s config.Settings) (url, prefix string) {
	url = strings.TrimSpace(s.Env.Get("EVOKORE_REDIS_URL"))
	if url == "" {
		url = DefaultRedisURL
	}
	prefix = s.Env.Get("EVOKORE_REDIS_KEY_PREFIX")
	if prefix == "" {
		prefix = DefaultRedisPrefix
	}
	return url, prefix
}

// Open returns the store EVOKORE_SESSION_STORE chooses: memory (the
// default, one replica), file (EVOKORE_HOME/session-store) or redis. An
// unknown kind, or a Redis that does not answer, is an error: a replica
// must not quietly fall back to keeping sessions to itself.
func Open(s config.Settings) (Store, error) {
	switch k := Kind(s); k {
	case KindMemory:
		return NewMemory(s.SessionTTL), nil
	case KindFile:
		return NewFile(filepath.Join(s.Home, "session-store"), s.SessionTTL), nil
	case KindRedis:
		url, prefix := RedisSettings(s)
		c, err := DialRedis(context.Background(), url)
		if err != nil {
			return nil, err
		}
		return NewRedis(c, prefix, s.SessionTTL), nil
	default:
		return nil, fmt.Errorf("EVOKORE_SESSION_STORE=%q: want memory, file or redis", k)
	}
}
