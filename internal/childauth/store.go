package childauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/statefile"
)

// maxEntryBytes caps a token file: a real one is a few kilobytes.
const maxEntryBytes = 1 << 20

// Entry is what evokore keeps of one child's authorization: the client
// it registered or was given, the endpoints to refresh and revoke at, the
// scopes granted and the tokens. It lives in one owner-only file under
// EVOKORE_HOME/oauth, and nowhere else: no status, log or record shows
// the tokens.
type Entry struct {
	// Server and URL name the child the tokens are for; Identity is
	// config.Server.Identity: a server of the same name reached another
	// way is another server, and gets none of these tokens.
	Server   string `json:"server"`
	URL      string `json:"url"`
	Identity string `json:"identity"`
	// Owner is the caller the tokens are for (see Owner); "" the
	// router's own. A lookup for one owner never takes another's entry.
	Owner string `json:"owner,omitempty"`
	// Resource is the RFC 8707 resource the tokens were issued for.
	Resource string `json:"resource,omitempty"`
	Issuer   string `json:"issuer,omitempty"`
	AuthURL  string `json:"authorizationEndpoint,omitempty"`
	TokenURL string `json:"tokenEndpoint"`
	// RevocationURL is the RFC 7009 endpoint, when the server has one.
	RevocationURL string `json:"revocationEndpoint,omitempty"`
	ClientID      string `json:"clientId"`
	// ClientSecret is kept only for a client evokore registered itself;
	// a configured one is read from the environment when needed.
	ClientSecret string           `json:"clientSecret,omitempty"`
	AuthStyle    oauth2.AuthStyle `json:"authStyle,omitempty"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token,omitempty"`
	// Obtained is when Token was issued: with its expiry, how long it
	// lives, which sets how early it is refreshed.
	Obtained time.Time `json:"obtained,omitzero"`
}

// HasTokens reports whether the entry holds a token to use or refresh.
func (e *Entry) HasTokens() bool {
	return e != nil && e.Token != nil && (e.Token.AccessToken != "" || e.Token.RefreshToken != "")
}

// refreshMargin is how long before its expiry a token is refreshed: a
// quarter of its life, at most a minute, so a call never goes out with a
// token about to lapse, and a short-lived token is not refreshed on every
// request.
func (e *Entry) refreshMargin() time.Duration {
	if e.Token == nil || e.Token.Expiry.IsZero() || e.Obtained.IsZero() {
		return 10 * time.Second
	}
	return min(time.Minute, e.Token.Expiry.Sub(e.Obtained)/4)
}

// fresh reports whether the access token may be used as it is.
func (e *Entry) fresh(now time.Time) bool {
	if e == nil || e.Token == nil || e.Token.AccessToken == "" {
		return false
	}
	return e.Token.Expiry.IsZero() || now.Add(e.refreshMargin()).Before(e.Token.Expiry)
}

// Store is the token files under EVOKORE_HOME/oauth.
type Store struct{ dir string }

// NewStore is the store of home (EVOKORE_HOME).
func NewStore(home string) *Store { return &Store{dir: filepath.Join(home, "oauth")} }

// Dir is where the token files are.
func (s *Store) Dir() string { return s.dir }

// path is the file of a child: named by a hash of its id and identity,
// so no id can name a path outside the directory.
func (s *Store) path(spec config.Server) string { return s.pathOf(principal{spec: spec}) }

// pathOf is the file of one owner's entry: the owner is in the hash
// (never in the name), so no lookup for one owner finds another's file.
func (s *Store) pathOf(p principal) string {
	name := p.spec.ID + "\x00" + p.spec.Identity()
	if p.owner != "" {
		name += "\x00owner\x00" + p.owner
	}
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:12])+".json")
}

// ErrExposed is a token file other users may read: it is not used, so a
// token that may have leaked is not trusted either.
var ErrExposed = errors.New("the token file may be read by other users; remove it and log in again")

// Load reads the child's entry; nil and no error when there is none. An
// entry written for another server (a changed url) counts as none.
func (s *Store) Load(spec config.Server) (*Entry, error) {
	return s.load(context.Background(), principal{spec: spec})
}

func (s *Store) load(_ context.Context, who principal) (*Entry, error) {
	spec, p := who.spec, s.pathOf(who)
	data, err := safefile.Load(p, maxEntryBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: %w", p, ErrExposed)
	}
	var e Entry
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	if e.Identity != spec.Identity() || e.Server != spec.ID || e.Owner != who.owner {
		return nil, nil
	}
	return &e, nil
}

// Save writes the child's entry, owner-only, atomically.
func (s *Store) Save(spec config.Server, e *Entry) error {
	return s.save(context.Background(), principal{spec: spec}, e)
}

func (s *Store) save(_ context.Context, p principal, e *Entry) error {
	e.Server, e.Identity, e.Owner = p.spec.ID, p.spec.Identity(), p.owner
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	return statefile.WriteJSON(s.pathOf(p), e, 0o600)
}

// Remove forgets the child's entry.
func (s *Store) Remove(spec config.Server) error {
	return s.remove(context.Background(), principal{spec: spec})
}

func (s *Store) remove(_ context.Context, p principal) error {
	err := os.Remove(s.pathOf(p))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// lock holds the child's file lock until unlock is called: a refresh
// and its write happen under it, so two routers sharing EVOKORE_HOME
// never both spend a refresh token that rotates.
func (s *Store) lock(spec config.Server) (unlock func(), err error) {
	return s.lockOf(context.Background(), principal{spec: spec})
}

func (s *Store) lockOf(_ context.Context, p principal) (unlock func(), err error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(s.pathOf(p)+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := statefile.Lock(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		statefile.Unlock(f)
		f.Close()
	}, nil
}

// ownerFiles is the file store as a tokenStore of callers' entries (one
// machine: no shared session store).
type ownerFiles struct{ *Store }

func (o ownerFiles) lock(ctx context.Context, p principal) (func(), error) { return o.lockOf(ctx, p) }
