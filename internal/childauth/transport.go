package childauth

import (
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// Transport authorizes the requests of a transport that takes only an
// *http.Client (the SDK's SSE client), as the SDK's streamable client
// does with its OAuthHandler: the handler's token on every request, and
// on a 401 or 403 its Authorize, then one retry.
func Transport(h auth.OAuthHandler, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &authTransport{h: h, base: base}
}

type authTransport struct {
	h    auth.OAuthHandler
	base http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	first, err := t.send(req)
	if err != nil || (first.StatusCode != http.StatusUnauthorized && first.StatusCode != http.StatusForbidden) {
		return first, err
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return first, nil // cannot be sent twice
	}
	if err := t.h.Authorize(req.Context(), req, first); err != nil {
		return nil, err
	}
	retry := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		retry.Body = body
	}
	return t.send(retry)
}

// send sends req with the handler's token, if it has one.
func (t *authTransport) send(req *http.Request) (*http.Response, error) {
	ts, err := t.h.TokenSource(req.Context())
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	if ts != nil {
		tok, err := ts.Token()
		var re *oauth2.RetrieveError
		switch {
		case err == nil:
			tok.SetAuthHeader(out)
		case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
			// No usable token: the server's 401 leads to Authorize.
		default:
			return nil, err
		}
	}
	if req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		out.Body = body
	}
	return t.base.RoundTrip(out)
}
