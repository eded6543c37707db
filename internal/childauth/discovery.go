package childauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// errNoS256 is an authorization server without PKCE S256: the only
// method MCP allows, so evokore does not authorize against it.
var errNoS256 = errors.New("its authorization server does not support PKCE with S256")

// discovery is what the metadata says of a child before a login starts.
type discovery struct {
	// resource is the RFC 8707 resource tokens are asked for.
	resource string
	// issuer and revocation are the authorization server's, when it
	// publishes metadata.
	issuer, revocation string
	// tokenURL is its token endpoint (its metadata's, else the 2025-03-26
	// default); scopes are the challenge's, else the resource's
	// scopes_supported.
	tokenURL string
	scopes   []string
	// pkce is false when the authorization server does not support S256.
	pkce bool
}

// discover reads the child's protected resource metadata (RFC 9728: the
// challenge's resource_metadata, then the well-known places) and its
// authorization server's metadata (RFC 8414 or OpenID discovery, the
// issuer checked by the SDK), and refuses what the SDK's flow would
// carry on past: metadata that names another resource, and a server
// without PKCE S256. The flow reads the same documents again; reading
// them here first is what lets a refusal say why. A server without S256
// is refused by the caller that needs PKCE (found.pkce).
func discover(ctx context.Context, client *http.Client, ch *challenge, resourceURL string) (*discovery, error) {
	challenges, _ := oauthex.ParseWWWAuthenticate(ch.header.Values("WWW-Authenticate"))
	var prm *oauthex.ProtectedResourceMetadata
	var mismatch error
	for _, c := range metadataURLs(bearerParam(challenges, "resource_metadata"), resourceURL) {
		got, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, client)
		if err != nil {
			// The SDK reports a resource that is not this server in
			// these words (oauthex.GetProtectedResourceMetadata).
			if strings.Contains(err.Error(), "got metadata resource") {
				mismatch = err
			}
			continue
		}
		if got != nil {
			prm = got
			break
		}
	}
	found := &discovery{resource: resourceURL, scopes: strings.Fields(bearerParam(challenges, "scope"))}
	authServer := ""
	switch {
	case prm != nil && len(prm.AuthorizationServers) == 0:
		return nil, errors.New("its protected resource metadata names no authorization server")
	case prm != nil:
		found.resource, authServer = prm.Resource, prm.AuthorizationServers[0]
		if len(found.scopes) == 0 {
			found.scopes = prm.ScopesSupported
		}
	case mismatch != nil:
		return nil, fmt.Errorf("its protected resource metadata is for another resource: %v", mismatch)
	default:
		// No metadata: the server's origin is its authorization server
		// (MCP 2025-03-26).
		u, err := url.Parse(resourceURL)
		if err != nil {
			return nil, err
		}
		u.Path, u.RawQuery, u.Fragment = "", "", ""
		authServer = u.String()
	}
	asm, err := auth.GetAuthServerMetadata(ctx, authServer, client)
	if err != nil {
		return nil, fmt.Errorf("its authorization server's metadata: %v", err)
	}
	found.issuer, found.tokenURL, found.pkce = authServer, strings.TrimSuffix(authServer, "/")+"/token", true
	if asm != nil {
		found.pkce = slices.Contains(asm.CodeChallengeMethodsSupported, "S256")
		found.issuer, found.tokenURL, found.revocation = asm.Issuer, asm.TokenEndpoint, asm.RevocationEndpoint
	}
	return found, nil
}

type metadataURL struct{ url, resource string }

// metadataURLs are the places protected resource metadata is looked for,
// in the specification's order, each with the resource it must name.
func metadataURLs(fromChallenge, resourceURL string) []metadataURL {
	var out []metadataURL
	if fromChallenge != "" {
		out = append(out, metadataURL{fromChallenge, resourceURL})
	}
	u, err := url.Parse(resourceURL)
	if err != nil {
		return out
	}
	at := *u
	at.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/")
	at.RawQuery = ""
	out = append(out, metadataURL{at.String(), resourceURL})
	root := *u
	root.Path, root.RawQuery = "/.well-known/oauth-protected-resource", ""
	origin := *u
	origin.Path, origin.RawQuery = "", ""
	return append(out, metadataURL{root.String(), origin.String()})
}
