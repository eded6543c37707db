package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// RFC 8693's names.
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
)

// Exchanger is an authorization server that trades tokens (RFC 8693):
// it issues the callers' own tokens (JWTs for Audience, which a router
// verifies at JWKSURL), and exchanges one of those, presented by its
// client, for an access token to a child, bound to the same subject. A
// subject token it did not issue, or revoked, is refused with
// invalid_grant. It also grants its client tokens of its own
// (client_credentials), whose subject is the client.
type Exchanger struct {
	// Issuer is its URL; its metadata is at the RFC 8414 place.
	Issuer string
	// JWKSURL is where the keys of the callers' tokens are.
	JWKSURL string
	// ClientID and ClientSecret are the one client it knows.
	ClientID, ClientSecret string
	// Audience is whom the callers' tokens are for.
	Audience string

	key *rsa.PrivateKey
	mu  sync.Mutex
	// issued and revoked are the ids (jti) of the callers' tokens.
	issued, revoked map[string]bool
	// tokens are the access tokens issued to the client.
	tokens map[string]grant
	// exchanged are the subjects of the exchanges it answered, in order.
	exchanged []string
}

// grant is one access token: for whom, to what, until when.
type grant struct {
	subject, resource string
	scopes            []string
	expiry            time.Time
}

// NewExchanger starts an Exchanger on a free port whose callers' tokens
// are for audience.
func NewExchanger(t testing.TB, audience string) *Exchanger {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
	x := &Exchanger{Issuer: issuer, JWKSURL: issuer + "/jwks", ClientID: "evokore-x-" + strings.ToLower(rand16()), ClientSecret: "s3cret-" + rand16(),
		Audience: audience, key: key, issued: map[string]bool{}, revoked: map[string]bool{}, tokens: map[string]grant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", x.metadata)
	mux.HandleFunc("/jwks", x.jwks)
	mux.HandleFunc("/token", x.token)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return x
}

// Inbound issues subject a token for Audience, valid for an hour, with
// the extra claims (a role, say).
func (x *Exchanger) Inbound(t testing.TB, subject string, extra map[string]any) string {
	t.Helper()
	now := time.Now()
	id := rand.Text()
	claims := jwt.MapClaims{"iss": x.Issuer, "aud": x.Audience, "sub": subject, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": id}
	for k, v := range extra {
		claims[k] = v
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "x1"
	s, err := tok.SignedString(x.key)
	if err != nil {
		t.Fatal(err)
	}
	x.mu.Lock()
	x.issued[id] = true
	x.mu.Unlock()
	return s
}

// Revoke makes the server refuse to exchange token from now on (a
// router may still accept it: it checks the signature only).
func (x *Exchanger) Revoke(t testing.TB, token string) {
	t.Helper()
	claims, err := x.parse(token)
	if err != nil {
		t.Fatal(err)
	}
	x.mu.Lock()
	x.revoked[claims.ID] = true
	x.mu.Unlock()
}

// Expire ends an access token the server issued to its client: a child
// refuses it from now on (401).
func (x *Exchanger) Expire(token string) {
	x.mu.Lock()
	delete(x.tokens, token)
	x.mu.Unlock()
}

// Exchanged are the subjects of the exchanges it answered, in order.
func (x *Exchanger) Exchanged() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.exchanged)
}

// NewChild starts a child whose authorization server is x: it accepts
// the access tokens x issued for it (or for no resource in particular:
// the client's own), and records their subjects.
func (x *Exchanger) NewChild(t testing.TB) *Child {
	t.Helper()
	var c *Child
	c = newChild(t, x.Issuer, "", func(_ context.Context, token string) (*auth.TokenInfo, error) {
		x.mu.Lock()
		g, ok := x.tokens[token]
		x.mu.Unlock()
		if !ok || time.Now().After(g.expiry) || (g.resource != "" && g.resource != c.URL) {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Scopes: g.scopes, Expiration: g.expiry, UserID: g.subject}, nil
	})
	return c
}

func (x *Exchanger) metadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": x.Issuer, "token_endpoint": x.Issuer + "/token", "authorization_endpoint": x.Issuer + "/authorize",
		"jwks_uri": x.JWKSURL, "response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
		"grant_types_supported":                 []string{grantTokenExchange, "client_credentials"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
	})
}

func (x *Exchanger) jwks(w http.ResponseWriter, _ *http.Request) {
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	writeJSON(w, http.StatusOK, map[string]any{"keys": []map[string]any{{
		"kty": "RSA", "kid": "x1", "use": "sig", "alg": "RS256",
		"n": b64(x.key.N.Bytes()), "e": b64(big.NewInt(int64(x.key.E)).Bytes()),
	}}})
}

// token is the token endpoint: the client authenticates (basic or in
// the form), then asks for a grant.
func (x *Exchanger) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "POST a form")
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != x.ClientID || secret != x.ClientSecret {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client")
		return
	}
	scopes := strings.Fields(r.PostForm.Get("scope"))
	if len(scopes) == 0 {
		scopes = BaseScopes
	}
	switch r.PostForm.Get("grant_type") {
	case grantTokenExchange:
		x.exchange(w, r, scopes)
	case "client_credentials":
		x.issue(w, grant{subject: x.ClientID, resource: r.PostForm.Get("resource"), scopes: scopes}, false)
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "")
	}
}

// exchange answers the token exchange grant: the subject token must be
// a caller's token this server issued, unrevoked, and the token issued
// is for the same subject, to the resource asked for.
func (x *Exchanger) exchange(w http.ResponseWriter, r *http.Request, scopes []string) {
	f := r.PostForm
	if f.Get("subject_token_type") != tokenTypeAccess || f.Get("requested_token_type") != tokenTypeAccess || f.Get("resource") == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "want an access token for a resource, for an access token")
		return
	}
	claims, err := x.parse(f.Get("subject_token"))
	x.mu.Lock()
	trusted := err == nil && x.issued[claims.ID] && !x.revoked[claims.ID]
	x.mu.Unlock()
	if !trusted {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the subject token is not one this server issued, or it was revoked")
		return
	}
	x.mu.Lock()
	x.exchanged = append(x.exchanged, claims.Subject)
	x.mu.Unlock()
	x.issue(w, grant{subject: claims.Subject, resource: f.Get("resource"), scopes: scopes}, true)
}

// issue answers with a new access token of g, for an hour.
func (x *Exchanger) issue(w http.ResponseWriter, g grant, exchanged bool) {
	g.expiry = time.Now().Add(time.Hour)
	token := "at-" + rand.Text()
	x.mu.Lock()
	x.tokens[token] = g
	x.mu.Unlock()
	body := map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": strings.Join(g.scopes, " ")}
	if exchanged {
		body["issued_token_type"] = tokenTypeAccess
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, body)
}

// parse checks a caller's token: signed by x, for Audience, from
// Issuer, not expired.
func (x *Exchanger) parse(token string) (*jwt.RegisteredClaims, error) {
	claims := &jwt.RegisteredClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return &x.key.PublicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithAudience(x.Audience), jwt.WithIssuer(x.Issuer), jwt.WithExpirationRequired())
	return claims, err
}

func oauthError(w http.ResponseWriter, status int, code, description string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": description})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
