package proxy

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicitMiddleware passes a child's elicitation/create on to the client
// before the SDK's client checks its schema. The router is not the party
// that renders the form: the SDK's check is stricter than the protocol
// (it refuses the titled multi-select of SEP-1330, items with anyOf), so
// it would refuse forms the user's client can show. The client checks
// the schema it is asked to render; the router only routes the request,
// with the asking server named in its message.
func (s *Supervisor) elicitMiddleware(server string, caps *mcp.ClientCapabilities) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			er, ok := req.(*mcp.ElicitRequest)
			if method != "elicitation/create" || !ok || er.Params == nil || !hasElicitation(caps) {
				return next(ctx, method, req)
			}
			peer, call, err := s.peerFor(server, "elicitation", false, hasElicitation)
			if err != nil {
				return nil, err
			}
			ctx, cancel := callContext(call, ctx)
			defer cancel()
			return peer.Elicit(ctx, named(server, er.Params))
		}
	}
}
