package ingress

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/rawjson"
)

// Methods the router serves itself.
//
// The go-sdk refuses a method it does not know before any middleware of
// the router's sees it (-32601), so the methods of an extension the SDK
// does not implement (tasks/* of both eras; the Skills Extension's
// skills/list and skills/get) cannot be answered on the SDK path. Both
// transports offer every clean request to Router.Take before the SDK
// decodes it; Take gives the requests whose method the router serves to
// its Methods, the one table of them, and the transport answers the Call
// a Method returns in its own framing, as it answers a carried
// tools/call. So a method is added in one place and reaches clients over
// stdio and HTTP, in both eras:
//
//	methods := ingress.Methods{
//		"skills/list": func(r ingress.Request) (ingress.Call, bool) {
//			if !r.Sessionless() {
//				return nil, false // not in this era: the SDK answers -32601
//			}
//			return ingress.Result(func(ctx context.Context) ([]byte, error) {
//				return listSkills(ctx, r.View.Session())
//			}), true
//		},
//	}
//
// A Method must not block: it decides whether to take the request (false
// leaves it to the SDK path, which refuses it as an unknown method), and
// the work happens when the transport runs the Call, on a goroutine of
// its own. Its result is written as it is: a method of the sessionless
// era says "resultType" itself.
type Methods map[string]Method

// Method takes one request of a method the router serves itself.
type Method func(r Request) (Call, bool)

// Request is a request offered to a Method: the view of the client that
// sent it, the message as read, and how its transport delivers it.
type Request struct {
	View    View
	Message Message
	Via     Via
}

// Take gives r to the Method its method names; false when there is none
// or r is a notification.
func (ms Methods) Take(r Request) (Call, bool) {
	h := ms[r.Message.Method]
	if h == nil || r.Message.ID == nil {
		return nil, false
	}
	return h(r)
}

// Meta is the request's _meta as sent, nil for none.
func (r Request) Meta() []byte { return rawjson.Member(r.Message.Params, "_meta") }

// Version is the protocol version the request speaks: the one its _meta
// names (the sessionless era), else its session's; "" before a session's
// handshake.
func (r Request) Version() string {
	if v, ok := rawjson.String(rawjson.Member(r.Meta(), mcp.MetaKeyProtocolVersion)); ok && v != "" {
		return v
	}
	if ip := r.View.InitializeParams(); ip != nil {
		return ip.ProtocolVersion
	}
	return ""
}

// Sessionless reports whether the request speaks the sessionless
// protocol (MCP 2026-07-28).
func (r Request) Sessionless() bool { return r.Via.Sessionless || era.Sessionless(r.Version()) }

// Result is a Call whose answer is fn's: the result's bytes, or a
// JSON-RPC error.
type Result func(ctx context.Context) ([]byte, error)

// Run implements Call.
func (fn Result) Run(ctx context.Context) (*mcp.CallToolResult, []byte, error) {
	raw, err := fn(ctx)
	if err != nil {
		return nil, nil, err
	}
	return nil, raw, nil
}
