package childauth

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisTokens keeps callers' entries in the Redis that replicas share
// (EVOKORE_SESSION_STORE=redis), so a caller who authorized a child
// through one replica is authorized on every one. Each entry is sealed
// with AES-GCM under a key derived from the key file every replica
// reads (EVOKORE_APPROVAL_KEY_FILE): whoever reads Redis without that
// file reads no token. The Redis key is bound into the seal, so an
// entry copied under another caller's key does not open.
//
// Keys, under the prefix: oauth:<hash of child, identity and owner> for
// an entry, and the same with :lock while a replica refreshes it.
type RedisTokens struct {
	client *redis.Client
	prefix string
	aead   cipher.AEAD
}

// tokenKeyInfo separates the tokens' key from every other use of the
// shared key file.
const tokenKeyInfo = "evokore child oauth tokens v1"

// NewRedisTokens keeps callers' entries in client under prefix, sealed
// with a key derived from secret (the shared key file's contents, at
// least 32 bytes).
func NewRedisTokens(client *redis.Client, prefix string, secret []byte) (*RedisTokens, error) {
	if len(secret) < 32 {
		return nil, errors.New("the key that seals callers' tokens must be at least 32 bytes")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, tokenKeyInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &RedisTokens{client: client, prefix: prefix, aead: aead}, nil
}

func (r *RedisTokens) key(p principal) string {
	sum := sha256.Sum256([]byte(p.spec.ID + "\x00" + p.spec.Identity() + "\x00owner\x00" + p.owner))
	return r.prefix + "oauth:" + hex.EncodeToString(sum[:16])
}

func (r *RedisTokens) load(ctx context.Context, p principal) (*Entry, error) {
	k := r.key(p)
	sealed, err := r.client.Get(ctx, k).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading a caller's tokens from redis: %w", err)
	}
	n := r.aead.NonceSize()
	if len(sealed) < n {
		return nil, fmt.Errorf("redis key %s does not hold sealed tokens", k)
	}
	plain, err := r.aead.Open(nil, sealed[:n], sealed[n:], []byte(k))
	if err != nil {
		return nil, fmt.Errorf("redis key %s does not open with this replica's key (EVOKORE_APPROVAL_KEY_FILE differs, or it was altered)", k)
	}
	var e Entry
	if err := json.Unmarshal(plain, &e); err != nil {
		return nil, fmt.Errorf("redis key %s: %v", k, err)
	}
	if e.Identity != p.spec.Identity() || e.Server != p.spec.ID || e.Owner != p.owner {
		return nil, nil
	}
	return &e, nil
}

func (r *RedisTokens) save(ctx context.Context, p principal, e *Entry) error {
	e.Server, e.Identity, e.Owner = p.spec.ID, p.spec.Identity(), p.owner
	plain, err := json.Marshal(e)
	if err != nil {
		return err
	}
	k := r.key(p)
	nonce := make([]byte, r.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	sealed := r.aead.Seal(nonce, nonce, plain, []byte(k))
	return r.client.Set(ctx, k, sealed, 0).Err()
}

func (r *RedisTokens) remove(ctx context.Context, p principal) error {
	return r.client.Del(ctx, r.key(p)).Err()
}

// lockTTL bounds how long a replica that died holding a lock keeps the
// others from refreshing.
const lockTTL = 45 * time.Second

// unlockScript deletes a lock only if it is still the holder's.
var unlockScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// lock holds p's lock, so two replicas never both spend a refresh token
// that rotates; it waits up to lockTTL for another holder.
func (r *RedisTokens) lock(ctx context.Context, p principal) (func(), error) {
	k := r.key(p) + ":lock"
	mine := rand.Text()
	ctx, cancel := context.WithTimeout(ctx, lockTTL)
	defer cancel()
	for {
		ok, err := r.client.SetNX(ctx, k, mine, lockTTL).Result()
		if err != nil {
			return nil, fmt.Errorf("locking a caller's tokens in redis: %w", err)
		}
		if ok {
			return func() {
				uctx, ucancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer ucancel()
				_ = unlockScript.Run(uctx, r.client, []string{k}, mine).Err()
			}, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("another replica held a caller's tokens for %s", lockTTL)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
