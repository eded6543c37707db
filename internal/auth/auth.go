// Package auth decides who an HTTP request acts for: a bearer token is
// checked against static tokens or verified as a JWT against a JWKS, and
// yields the principal a session runs as (its subject, which scopes
// tenants, and its role claim).
//
// It knows nothing of MCP or routes: the HTTP front asks it about each
// request and answers 401 on an error.
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// Principal is who a request acts for.
type Principal struct {
	// Subject is the JWT sub; empty for static tokens.
	Subject string
	// Role is the JWT role claim; empty when the token has none (the
	// router's role applies then).
	Role string
}

// Authenticator checks one request's credentials.
type Authenticator interface {
	Authenticate(r *http.Request) (Principal, error)
}

// Errors an Authenticator returns; their text is the 401's detail.
var (
	ErrMissing = errors.New("missing bearer token")
	ErrInvalid = errors.New("invalid bearer token")
	// ErrNoAudience is a JWT verifier asked for with no audience.
	ErrNoAudience = errors.New("no audience to check JWTs against")
)

// Bearer returns the request's bearer token.
func Bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// Static accepts any of a fixed set of tokens. Tokens are compared as
// HMAC digests under a per-process key, so the comparison takes the same
// time whatever the length or content of the guess, and every token is
// compared on every request.
type Static struct {
	key     []byte
	digests [][]byte
}

// NewStatic accepts tokens; empty entries are ignored, and with none left
// every request is refused.
func NewStatic(tokens []string) *Static {
	s := &Static{key: make([]byte, 32)}
	_, _ = rand.Read(s.key)
	for _, t := range tokens {
		if t = strings.TrimSpace(t); t != "" {
			s.digests = append(s.digests, s.digest(t))
		}
	}
	return s
}

// Empty reports whether no token is accepted.
func (s *Static) Empty() bool { return len(s.digests) == 0 }

func (s *Static) digest(t string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(t))
	return m.Sum(nil)
}

// Authenticate implements Authenticator.
func (s *Static) Authenticate(r *http.Request) (Principal, error) {
	token, ok := Bearer(r)
	if !ok {
		return Principal{}, ErrMissing
	}
	if !s.Match(token) {
		return Principal{}, ErrInvalid
	}
	return Principal{}, nil
}

// Match reports whether token is one of the accepted tokens (a login
// form's, say), in the same constant time as Authenticate.
func (s *Static) Match(token string) bool {
	d := s.digest(token)
	match := 0
	for _, want := range s.digests {
		match |= subtle.ConstantTimeCompare(d, want)
	}
	return match == 1
}

// JWTOptions configure NewJWT.
type JWTOptions struct {
	// JWKSURL is where the signing keys are published.
	JWKSURL string
	// Issuer, when set, must match the iss claim.
	Issuer string
	// Audience must be among the aud claim's values. It is required: a
	// token minted for another service is not one for this server.
	Audience string
	// AnyAudience lets an empty Audience accept every aud, for the
	// operator who explicitly chose that risk.
	AnyAudience bool
	// Leeway tolerates clock skew on exp and nbf; zero means 30 s.
	Leeway time.Duration
	// Client fetches the JWKS; nil is a client with a 10 s timeout.
	Client *http.Client
	// Log receives JWKS refresh failures.
	Log *slog.Logger
}

// JWT verifies signed tokens against a JWKS, which is fetched once,
// cached, refreshed hourly and when a token names an unknown key (rate
// limited). Only asymmetric algorithms are accepted, so a key published
// for verification can never be used as an HMAC secret.
type JWT struct {
	keys   keyfunc.Keyfunc
	parser *jwt.Parser
	stop   context.CancelFunc
}

// jwtClaims are the claims read beyond the registered ones.
type jwtClaims struct {
	jwt.RegisteredClaims
	Role string `json:"role,omitempty"`
}

// NewJWT starts verifying against o.JWKSURL. An unreachable JWKS is not
// an error here (tokens fail until it answers).
func NewJWT(o JWTOptions) (*JWT, error) {
	if strings.TrimSpace(o.JWKSURL) == "" {
		return nil, errors.New("no JWKS URL")
	}
	if o.Audience == "" && !o.AnyAudience {
		return nil, ErrNoAudience
	}
	if o.Leeway == 0 {
		o.Leeway = 30 * time.Second
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	keys, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{o.JWKSURL}, keyfunc.Override{
		Client: o.Client,
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) {
				log.Warn("[EVOKORE] Could not refresh the JWKS", "url", u, "err", err)
			}
		},
	})
	if err != nil {
		cancel()
		return nil, err
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}),
		jwt.WithLeeway(o.Leeway),
		jwt.WithExpirationRequired(),
	}
	if o.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(o.Issuer))
	}
	if o.Audience != "" {
		opts = append(opts, jwt.WithAudience(o.Audience))
	}
	return &JWT{keys: keys, parser: jwt.NewParser(opts...), stop: cancel}, nil
}

// Close stops refreshing the JWKS.
func (j *JWT) Close() { j.stop() }

// Authenticate implements Authenticator.
func (j *JWT) Authenticate(r *http.Request) (Principal, error) {
	raw, ok := Bearer(r)
	if !ok {
		return Principal{}, ErrMissing
	}
	var c jwtClaims
	if _, err := j.parser.ParseWithClaims(raw, &c, j.keys.KeyfuncCtx(r.Context())); err != nil {
		return Principal{}, fmt.Errorf("%w: %s", ErrInvalid, reason(err))
	}
	return Principal{Subject: c.Subject, Role: strings.TrimSpace(c.Role)}, nil
}

// reason names why a token was refused without echoing anything of it.
func reason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "token expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "token not valid yet"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "wrong issuer"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "wrong audience"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "a required claim is missing"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "signature not verified"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "malformed token"
	}
	return "token rejected"
}

// DenyAll refuses every request: what an unusable authentication
// setting falls back to, never to no authentication.
type DenyAll struct{}

// Authenticate implements Authenticator.
func (DenyAll) Authenticate(*http.Request) (Principal, error) {
	return Principal{}, errors.New("authentication is misconfigured on this server")
}
