package childauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/evokore/evokore/internal/config"
)

// clientCredentials is the handler of a child reached with no user (a
// gateway on a server): the client credentials grant, with a client
// secret (the SDK's extauth handler: client_secret_basic or _post, as
// the server supports) or a private key (private_key_jwt, RFC 7523: a
// fresh signed assertion for every token request). Its tokens stay in
// memory: they are had again without anyone's help.
func (m *Manager) clientCredentials(spec config.Server) auth.OAuthHandler {
	return &ccHandler{m: m, spec: spec}
}

type ccHandler struct {
	m    *Manager
	spec config.Server

	// mu orders the transport's reads of the token source against
	// Authorize replacing it (the SDK's handler does not).
	mu    sync.Mutex
	inner auth.OAuthHandler
}

func (h *ccHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.inner == nil {
		return nil, nil
	}
	return h.inner.TokenSource(ctx)
}

// Authorize gets a token for the request the child refused.
func (h *ccHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	resolved, err := h.spec.Resolve(h.m.opts.Env)
	if err != nil {
		resp.Body.Close()
		return err
	}
	o := resolved.OAuth
	if o == nil || o.ClientID == "" || (o.ClientSecret == "") == (o.PrivateKey == "") {
		resp.Body.Close()
		return fmt.Errorf("the '%s' server's client credentials need oauth.clientId and one of oauth.clientSecret or oauth.privateKey", h.spec.ID)
	}
	client := h.m.httpClient(h.spec)
	var inner auth.OAuthHandler
	if o.ClientSecret != "" {
		inner, err = extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: o.ClientID, Issuer: o.Issuer,
				ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}},
			HTTPClient: client,
		})
	} else {
		inner, err = newJWTHandler(o, client)
	}
	if err != nil {
		resp.Body.Close()
		return fmt.Errorf("the '%s' server's client credentials: %v", h.spec.ID, err)
	}
	// The SDK's handler keeps the context it is given for every later
	// token request: one that ends with this request would end them.
	if err := inner.Authorize(context.WithoutCancel(ctx), req, resp); err != nil {
		return fmt.Errorf("the '%s' server refused evokore's client credentials: %s", h.spec.ID, safeError(err))
	}
	h.inner = inner
	return nil
}

// jwtHandler is the client credentials grant authenticated by a private
// key (private_key_jwt), which the SDK's extauth does not do.
type jwtHandler struct {
	clientID string
	key      crypto.Signer
	method   jwt.SigningMethod
	issuer   string
	client   *http.Client
	ts       oauth2.TokenSource
}

func newJWTHandler(o *config.OAuth, client *http.Client) (*jwtHandler, error) {
	key, method, err := signingKey([]byte(o.PrivateKey), o.SigningAlgorithm)
	if err != nil {
		return nil, err
	}
	return &jwtHandler{clientID: o.ClientID, key: key, method: method, issuer: o.Issuer, client: client}, nil
}

func (h *jwtHandler) TokenSource(context.Context) (oauth2.TokenSource, error) { return h.ts, nil }

func (h *jwtHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusForbidden {
		cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		if bearerParam(cs, "error") != "insufficient_scope" {
			return nil
		}
	}
	found, err := discover(ctx, h.client, &challenge{url: req.URL.String(), status: resp.StatusCode, header: resp.Header}, req.URL.String())
	if err != nil {
		return err
	}
	if h.issuer != "" && !sameIssuer(h.issuer, found.issuer) {
		return fmt.Errorf("the authorization server %q is not the configured issuer %q", found.issuer, h.issuer)
	}
	src := &assertionSource{h: h, tokenURL: found.tokenURL, audience: found.issuer, scopes: found.scopes, resource: found.resource}
	ts := oauth2.ReuseTokenSource(nil, src)
	if _, err := ts.Token(); err != nil {
		return err
	}
	h.ts = ts
	return nil
}

// assertionSource asks for a token with a new assertion each time.
type assertionSource struct {
	h                  *jwtHandler
	tokenURL, audience string
	resource           string
	scopes             []string
}

func (s *assertionSource) Token() (*oauth2.Token, error) {
	now := time.Now()
	claims := jwt.RegisteredClaims{
		Issuer: s.h.clientID, Subject: s.h.clientID, Audience: jwt.ClaimStrings{s.audience},
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(5 * time.Minute)),
		ID: rand.Text(),
	}
	assertion, err := jwt.NewWithClaims(s.h.method, claims).SignedString(s.h.key)
	if err != nil {
		return nil, err
	}
	cfg := &clientcredentials.Config{
		ClientID: s.h.clientID, TokenURL: s.tokenURL, Scopes: s.scopes, AuthStyle: oauth2.AuthStyleInParams,
		EndpointParams: map[string][]string{
			"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
			"client_assertion":      {assertion},
			"resource":              {s.resource},
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, s.h.client))
}

// signingKey reads a PEM private key and the JWS algorithm to sign with:
// alg when given, else the key's usual one (ES256 for P-256, RS256, EdDSA).
func signingKey(pem []byte, alg string) (crypto.Signer, jwt.SigningMethod, error) {
	var key crypto.Signer
	if k, err := jwt.ParseECPrivateKeyFromPEM(pem); err == nil {
		key = k
	} else if k, err := jwt.ParseRSAPrivateKeyFromPEM(pem); err == nil {
		key = k
	} else if k, err := jwt.ParseEdPrivateKeyFromPEM(pem); err == nil {
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, nil, errors.New("oauth.privateKey: not a signing key")
		}
		key = s
	} else {
		return nil, nil, errors.New("oauth.privateKey: not a PEM EC, RSA or Ed25519 private key")
	}
	if alg == "" {
		switch k := key.(type) {
		case *ecdsa.PrivateKey:
			alg = map[int]string{256: "ES256", 384: "ES384", 521: "ES512"}[k.Curve.Params().BitSize]
		case *rsa.PrivateKey:
			alg = "RS256"
		case ed25519.PrivateKey:
			alg = "EdDSA"
		}
	}
	method := jwt.GetSigningMethod(alg)
	if method == nil {
		return nil, nil, fmt.Errorf("oauth.signingAlgorithm: %q is not an algorithm for this key", alg)
	}
	return key, method, nil
}

// sameIssuer compares issuers as the SDK does: a trailing slash apart.
func sameIssuer(a, b string) bool {
	trim := func(s string) string {
		for len(s) > 0 && s[len(s)-1] == '/' {
			s = s[:len(s)-1]
		}
		return s
	}
	return trim(a) == trim(b)
}
