package auth_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/evokore/evokore/internal/auth"
)

func request(token string) *http.Request {
	r := httptest.NewRequest("POST", "/mcp", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

func TestStaticTokens(t *testing.T) {
	s := auth.NewStatic([]string{"alpha-token", " ", "beta-token"})
	for token, want := range map[string]error{
		"alpha-token": nil, "beta-token": nil,
		"": auth.ErrMissing, "alpha": auth.ErrInvalid, "alpha-token-x": auth.ErrInvalid, "ALPHA-TOKEN": auth.ErrInvalid,
	} {
		if _, err := s.Authenticate(request(token)); !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", token, err, want)
		}
	}
	r := request("")
	r.Header.Set("Authorization", "Basic YWxwaGEtdG9rZW4=")
	if _, err := s.Authenticate(r); !errors.Is(err, auth.ErrMissing) {
		t.Errorf("basic auth: %v", err)
	}
	if !auth.NewStatic(nil).Empty() {
		t.Error("no tokens is not Empty")
	}
	if _, err := auth.NewStatic(nil).Authenticate(request("")); err == nil {
		t.Error("an empty static set accepted a request")
	}
}

// A JWT signed with HMAC using the published key as the secret, or with
// no signature at all, is refused: only asymmetric algorithms count.
func TestJWTRefusesAlgorithmConfusion(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	set, _ := json.Marshal(map[string]any{"keys": []map[string]any{{"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256", "n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())}}})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(set) }))
	defer ts.Close()
	j, err := auth.NewJWT(auth.JWTOptions{JWKSURL: ts.URL, Audience: "evokore"})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	claims := jwt.MapClaims{"sub": "alice", "aud": "evokore", "exp": time.Now().Add(time.Hour).Unix(), "role": "admin"}
	good := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	good.Header["kid"] = "k1"
	signed, _ := good.SignedString(key)
	p, err := j.Authenticate(request(signed))
	if err != nil || p.Subject != "alice" || p.Role != "admin" {
		t.Fatalf("good token: %+v %v", p, err)
	}
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	hs.Header["kid"] = "k1"
	hsSigned, _ := hs.SignedString(set)
	none := jwt.NewWithClaims(jwt.SigningMethodNone, claims)
	noneSigned, _ := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	for name, tok := range map[string]string{"HS256": hsSigned, "none": noneSigned, "garbage": "a.b.c"} {
		if _, err := j.Authenticate(request(tok)); !errors.Is(err, auth.ErrInvalid) {
			t.Errorf("%s token: %v", name, err)
		}
	}
}

// A verifier without an audience is refused unless the caller opted out
// explicitly; with one, a token for another audience, or with none, fails.
func TestJWTRequiresAnAudience(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	set, _ := json.Marshal(map[string]any{"keys": []map[string]any{{"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256", "n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())}}})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(set) }))
	defer ts.Close()
	if j, err := auth.NewJWT(auth.JWTOptions{JWKSURL: ts.URL}); !errors.Is(err, auth.ErrNoAudience) {
		if j != nil {
			j.Close()
		}
		t.Fatalf("no audience: %v; want ErrNoAudience", err)
	}
	sign := func(c jwt.MapClaims) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
		tok.Header["kid"] = "k1"
		s, _ := tok.SignedString(key)
		return s
	}
	exp := time.Now().Add(time.Hour).Unix()
	j, err := auth.NewJWT(auth.JWTOptions{JWKSURL: ts.URL, Audience: "http://127.0.0.1:3100/mcp", Issuer: "https://issuer.test"})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for name, c := range map[string]jwt.MapClaims{
		"another audience": {"sub": "a", "aud": "https://other.example/mcp", "iss": "https://issuer.test", "exp": exp},
		"no audience":      {"sub": "a", "iss": "https://issuer.test", "exp": exp},
		"another issuer":   {"sub": "a", "aud": "http://127.0.0.1:3100/mcp", "iss": "https://evil.test", "exp": exp},
	} {
		if _, err := j.Authenticate(request(sign(c))); !errors.Is(err, auth.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := j.Authenticate(request(sign(jwt.MapClaims{"sub": "a", "aud": []string{"x", "http://127.0.0.1:3100/mcp"}, "iss": "https://issuer.test", "exp": exp}))); err != nil {
		t.Errorf("this server's audience: %v", err)
	}
	open, err := auth.NewJWT(auth.JWTOptions{JWKSURL: ts.URL, AnyAudience: true})
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if _, err := open.Authenticate(request(sign(jwt.MapClaims{"sub": "a", "aud": "anything", "exp": exp}))); err != nil {
		t.Errorf("the unsafe opt-out refused a token: %v", err)
	}
}
